import { describe, expect, test } from 'vitest';
import { offsetSegments } from '../src/collection/plan/time-buckets.ts';

/**
 * offsetSegments (kept a year at a time) against a second, independent source: the offset that
 * Intl prints for each second asked about. Intl and the engine's Temporal polyfill are separate
 * code over the same IANA rules, so agreement at every segment edge and every hour between
 * them (sampled every six hours, closer than any zone changes twice) means the segments hold
 * exactly the zone's changes.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's UTC offset at Unix second `t`, in seconds, as Intl prints it. */
function intlOffset(timeZone: string, t: number): number {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
    formatters.set(timeZone, format);
  }
  const name =
    format.formatToParts(new Date(t * 1000)).find((p) => p.type === 'timeZoneName')?.value ?? '';
  const m = /^GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(name);
  if (!m) throw new Error(`unexpected offset name ${name}`);
  if (!m[1]) return 0;
  const seconds = Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4] ?? 0);
  return m[1] === '-' ? -seconds : seconds;
}

/** Seconds between the samples taken inside a segment. */
const SAMPLE = 6 * 3600;

/** Every property the segments of a window must have, checked against Intl. */
function checkWindow(timeZone: string, lo: number, hi: number) {
  const segments = offsetSegments(timeZone, lo, hi);
  expect(segments[0]?.from).toBe(lo);
  segments.forEach((segment, i) => {
    const next = segments[i + 1];
    const end = next ? next.from - 1 : hi;
    expect(segment.from).toBeLessThanOrEqual(end);
    expect(intlOffset(timeZone, segment.from)).toBe(segment.offset);
    expect(intlOffset(timeZone, end)).toBe(segment.offset);
    for (let t = segment.from + SAMPLE; t < end; t += SAMPLE) {
      expect(intlOffset(timeZone, t)).toBe(segment.offset);
    }
    if (i > 0) {
      const before = segments[i - 1]?.offset;
      expect(segment.offset).not.toBe(before);
      expect(intlOffset(timeZone, segment.from - 1)).toBe(before);
    }
  });
  return segments;
}

const at = (iso: string) => Date.parse(iso) / 1000;

describe('offsetSegments', () => {
  test('Los Angeles over both 2024 changes, to the second', () => {
    expect(
      checkWindow('America/Los_Angeles', at('2024-03-01T00:00:00Z'), at('2024-12-01T00:00:00Z')),
    ).toEqual([
      { from: at('2024-03-01T00:00:00Z'), offset: -8 * 3600 },
      { from: at('2024-03-10T10:00:00Z'), offset: -7 * 3600 },
      { from: at('2024-11-03T09:00:00Z'), offset: -8 * 3600 },
    ]);
  });

  test('a window across New Year has no change at the year boundary', () => {
    const lo = at('2023-12-20T00:00:00Z');
    const hi = at('2024-01-10T00:00:00Z');
    expect(checkWindow('Europe/London', lo, hi)).toEqual([{ from: lo, offset: 0 }]);
    expect(checkWindow('Australia/Sydney', lo, hi)).toEqual([{ from: lo, offset: 11 * 3600 }]);
  });

  test('a window that starts on a change, and one that ends on it', () => {
    const change = at('2024-03-31T01:00:00Z'); // London: GMT -> BST
    expect(checkWindow('Europe/London', change, change + 86_400)).toEqual([
      { from: change, offset: 3600 },
    ]);
    expect(checkWindow('Europe/London', change - 86_400, change)).toEqual([
      { from: change - 86_400, offset: 0 },
      { from: change, offset: 3600 },
    ]);
  });

  test('half-hour and 45-minute zones, a skipped day, an abolished DST and UTC', () => {
    checkWindow('Australia/Lord_Howe', at('2023-06-01T00:00:00Z'), at('2024-06-01T00:00:00Z'));
    checkWindow('Asia/Kathmandu', at('1985-06-01T00:00:00Z'), at('1987-01-01T00:00:00Z'));
    checkWindow('Pacific/Apia', at('2011-12-01T00:00:00Z'), at('2012-01-31T00:00:00Z'));
    checkWindow('America/Sao_Paulo', at('2018-06-01T00:00:00Z'), at('2020-06-01T00:00:00Z'));
    expect(checkWindow('UTC', 0, at('1999-12-31T23:59:59Z'))).toEqual([{ from: 0, offset: 0 }]);
  });

  test('120 seeded windows of up to 200 days in eight zones, asked twice', () => {
    const zones = [
      'America/Los_Angeles',
      'Europe/London',
      'Europe/Berlin',
      'Australia/Lord_Howe',
      'America/Santiago',
      'Asia/Tehran',
      'Africa/Casablanca',
      'Pacific/Chatham',
    ];
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 120; i++) {
      const timeZone = zones[i % zones.length] as string;
      const lo = Math.floor(random() * at('2040-01-01T00:00:00Z'));
      const hi = lo + Math.floor(random() * 200 * 86_400);
      const first = checkWindow(timeZone, lo, hi);
      // The second answer comes from the kept years.
      expect(offsetSegments(timeZone, lo, hi)).toEqual(first);
    }
  });
});
