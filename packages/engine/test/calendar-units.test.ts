import { Temporal } from 'temporal-polyfill';
import { describe, expect, test } from 'vitest';
import { calendarUnits, MAX_UNITS } from '../src/collection/plan/calendar-units.ts';
import { planBuckets } from '../src/collection/plan/time-buckets.ts';
import { wallAt } from './helpers/wall-clock.ts';

/**
 * The spans of UTC time an additive Day line groups by, checked against the wall date Intl shows at
 * each span's first second, in every zone of the tz database over a window around its first
 * offset change of 2024 (or a quiet one).
 */

const DAY = 86_400;
const START_2024 = Date.UTC(2024, 0, 1) / 1000;

/** Days since 1970-01-01 of the wall date at `ts` in `zone`, as the oracle's Intl clock shows it. */
function wallDay(zone: string, ts: number): number {
  return Math.floor(wallAt(ts, zone).seconds / DAY);
}

function firstChange(zone: string, from = START_2024): number | undefined {
  const start = Temporal.Instant.fromEpochMilliseconds(from * 1000).toZonedDateTimeISO(zone);
  const next = start.getTimeZoneTransition('next');
  return next ? next.epochMilliseconds / 1000 : undefined;
}

describe('calendar units', () => {
  test('a span is the largest that divides a day, the offsets and their changes', () => {
    const span = (zone: string, lo: number, hi: number) =>
      calendarUnits(planBuckets('Day', zone, lo, hi), lo, hi)?.seconds;
    const month = 30 * DAY;
    expect(span('UTC', START_2024, START_2024 + month)).toBe(DAY);
    expect(span('America/Los_Angeles', START_2024, START_2024 + 120 * DAY)).toBe(3600);
    expect(span('America/Los_Angeles', START_2024, START_2024 + 365 * DAY)).toBeUndefined();
    expect(span('Asia/Kolkata', START_2024, START_2024 + month)).toBe(1800);
    expect(span('Asia/Kathmandu', START_2024, START_2024 + month)).toBe(900);
    // Paris on local mean time, 561 s ahead of UTC: spans of gcd(86400, 561) = 3 s.
    const lmt = Date.UTC(1890, 0, 1) / 1000;
    expect(span('Europe/Paris', lmt, lmt + 3600)).toBe(3);
    expect(span('Europe/Paris', lmt, lmt + 3 * MAX_UNITS)).toBeUndefined();
    // Goose Bay set its clocks at 00:01 (1987 to 1991): a change a minute past the half hour.
    const change = firstChange('America/Goose_Bay', Date.UTC(1988, 0, 1) / 1000) ?? 0;
    expect(span('America/Goose_Bay', change - DAY, change + DAY)).toBe(60);
    // Before May 1778 the shifted seconds are negative, which SQL divides by truncation.
    const early = Date.UTC(1778, 4, 1) / 1000;
    expect(span('UTC', early, early + month)).toBeUndefined();
    expect(span('UTC', early + 10 * DAY, early + 10 * DAY + month)).toBe(DAY);
    // Hour and Minute plans key buckets per event.
    const hours = planBuckets('Hour', 'UTC', START_2024, START_2024 + month);
    expect(calendarUnits(hours, START_2024, START_2024 + month)).toBeUndefined();
  });

  test('every span of every zone files its seconds under their wall date', () => {
    let checked = 0;
    for (const zone of Intl.supportedValuesOf('timeZone')) {
      const change = firstChange(zone) ?? START_2024 + 100 * DAY;
      // Windows that start and end mid-span, on either side of the change.
      const lo = change - 20 * DAY + 777;
      const hi = change + 20 * DAY - 555;
      for (const granularity of ['Day', 'Week', 'Month'] as const) {
        const plan = planBuckets(granularity, zone, lo, hi);
        const units = calendarUnits(plan, lo, hi);
        if (!units) throw new Error(`${zone}: no calendar units`);
        const keys = new Set(plan.buckets.map((b) => b.key));
        const first = Math.floor(lo / units.seconds);
        const last = Math.floor(hi / units.seconds);
        for (let n = first; n <= last; n++) {
          const key = units.bucketOf(n);
          if (!keys.has(key)) throw new Error(`${zone} ${granularity}: span ${n} has no bucket`);
          if (granularity !== 'Day') continue;
          // The first and the last second of the span within the window.
          for (const ts of [
            Math.max(n * units.seconds, lo),
            Math.min((n + 1) * units.seconds - 1, hi),
          ]) {
            if (wallDay(zone, ts) !== key) {
              throw new Error(
                `${zone}: second ${ts} filed under day ${key}, its wall date is ${wallDay(zone, ts)}`,
              );
            }
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(100_000);
  }, 120_000);
});
