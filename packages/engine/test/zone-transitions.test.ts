import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Envelope } from '@analytics-chart/protocol';
import { Temporal } from 'temporal-polyfill';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { planBuckets } from '../src/collection/plan/time-buckets.ts';
import { exportToClickHouse } from '../src/drivers/export-to-clickhouse.ts';
import { createEngine, type Engine } from '../src/index.ts';
import { loadNdjson } from '../src/ingest/load-ndjson.ts';
import { WorkspaceDb } from '../src/storage/duckdb/workspace-db.ts';
import { driverOptions, ON_CLICKHOUSE } from './helpers/driver.ts';
import { type FixtureEvent, referenceAnswer } from './helpers/reference.ts';
import { wallAt, wallRows } from './helpers/wall-clock.ts';

/**
 * Hour and Minute series across every offset change since 1970 of every zone in the tz database
 * (as the runtime's Intl knows them), generated here, answered by the engine and by the
 * reference, which walks the zone's wall clock with Intl. Events sit on every row edge of each
 * window and one second before it, so a second put into the wrong row changes a count.
 */

const KEY = 'zone-transitions-key';
const FIRST = Date.UTC(1970, 0, 1) / 1000;
const LAST = Date.UTC(2038, 0, 1) / 1000;
const NOW = LAST + 86_400;

interface Transition {
  zone: string;
  at: number;
}

/** Every offset change of every zone from 1970 on, from Temporal's transition search. */
function transitions(): Transition[] {
  const out: Transition[] = [];
  for (const zone of Intl.supportedValuesOf('timeZone')) {
    let zoned = Temporal.Instant.fromEpochMilliseconds(FIRST * 1000).toZonedDateTimeISO(zone);
    for (;;) {
      const next = zoned.getTimeZoneTransition('next');
      if (!next || next.epochMilliseconds / 1000 >= LAST) break;
      out.push({ zone, at: next.epochMilliseconds / 1000 });
      zoned = next;
    }
  }
  return out;
}

/**
 * {@link transitions}, kept in the OS temp directory for the next project or run on the same
 * runtime, time zone data and polyfill: the search is slow, and both drivers' runs ask it.
 */
function cachedTransitions(): Transition[] {
  const polyfill = import.meta.resolve('temporal-polyfill');
  const { node, tz, icu } = process.versions;
  const key = createHash('sha256')
    .update(JSON.stringify([node, tz, icu, polyfill, FIRST, LAST]))
    .digest('hex')
    .slice(0, 16);
  const file = join(tmpdir(), `engine-zone-transitions-${key}.json`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Transition[];
  } catch {
    const found = transitions();
    // Written whole, then renamed, so a run beside this one never reads half a file.
    const partial = `${file}.${process.pid}`;
    writeFileSync(partial, JSON.stringify(found));
    renameSync(partial, file);
    return found;
  }
}

/** A change that is not a whole hour, or does not happen on the hour of the clock before it. */
function offTheHour({ zone, at }: Transition): boolean {
  const before = wallAt(at - 1, zone).seconds + 1;
  const after = wallAt(at, zone).seconds;
  return (after - before) % 3600 !== 0 || before % 3600 !== 0;
}

const WINDOWS = {
  Hour: { before: 3 * 3600, after: 3 * 3600 },
  Minute: { before: 4 * 60, after: 4 * 60 },
  Day: { before: 2 * 86_400, after: 2 * 86_400 },
} as const;
type Granularity = keyof typeof WINDOWS;

/** Day series only across changes that move the clock to another date (a skipped day). */
function granularities({ zone, at }: Transition): Granularity[] {
  const crossesDate = wallAt(at - 1, zone).day !== wallAt(at, zone).day;
  return crossesDate ? ['Hour', 'Minute', 'Day'] : ['Hour', 'Minute'];
}

const all = cachedTransitions();
const isOdd = all.map(offTheHour);
const odd = all.filter((_, i) => isOdd[i]);
// Whole-hour changes on the hour behave alike: every zone's first and last one since 1970, and
// every 32nd in between, keep the run short while the odd ones are all covered (and the plan the
// SQL is written from is checked at every change below). On ClickHouse,
// whose queries pass one at a time through the test server, the odd ones and every 128th.
const sampled = all.filter((t, i) => {
  if (isOdd[i]) return true;
  if (ON_CLICKHOUSE) return i % 128 === 0;
  const zoneFirst = all[i - 1]?.zone !== t.zone;
  const zoneLast = all[i + 1]?.zone !== t.zone;
  return zoneFirst || zoneLast || i % 32 === 0;
});

/**
 * The collection a zone's events go in. On DuckDB one of {@link ZONE_GROUPS}, each holding a run
 * of zones in the order the queries visit them, so that each of the thousands of queries scans
 * a sixteenth of the events (its statement still cached); the queries still filter by zone, which
 * leaves out the other zones of the collection. On ClickHouse all in one collection.
 */
const ZONE_GROUPS = 16;
const zoneIds = new Map([...new Set(sampled.map((t) => t.zone))].map((zone, i) => [zone, i]));
function collectionOf(zone: string): string {
  if (ON_CLICKHOUSE) return 'all_events';
  return `zones_${Math.floor(((zoneIds.get(zone) ?? 0) * ZONE_GROUPS) / zoneIds.size)}`;
}

const eventsByZone = new Map<string, FixtureEvent[]>();
let dir: string;
let engine: Engine;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'engine-zones-'));
  const staging = join(dir, 'staging');
  mkdirSync(staging);
  // One event on each row edge of each window and one second before it, found by the oracle.
  const lines = new Map<string, string[]>();
  for (const t of sampled) {
    const { zone, at } = t;
    const seconds = new Set<number>([at - 1, at]);
    for (const g of granularities(t)) {
      const w = WINDOWS[g];
      const { rows } = wallRows(zone, g, at - w.before, at + w.after);
      for (const row of rows) seconds.add(row.start).add(row.start - 1);
    }
    const list = eventsByZone.get(zone) ?? [];
    eventsByZone.set(zone, list);
    const collectionLines = lines.get(collectionOf(zone)) ?? [];
    lines.set(collectionOf(zone), collectionLines);
    for (const timestamp of seconds) {
      const json = { zone, n: list.length };
      list.push({ timestamp, json });
      collectionLines.push(JSON.stringify({ timestamp, json }));
    }
  }
  const db = await WorkspaceDb.open(join(dir, 'default.duckdb'), { stagingDir: staging });
  const storage = driverOptions();
  try {
    for (const [collection, collectionLines] of lines) {
      const file = join(dir, `${collection}.ndjson`);
      writeFileSync(file, `${collectionLines.join('\n')}\n`);
      await loadNdjson(db, collection, file, { workers: 0 });
    }
    // On ClickHouse: the same events, moved there as users move a workspace.
    if (storage.clickhouse) await exportToClickHouse(db, 'default', storage.clickhouse);
  } finally {
    await db.close();
  }
  engine = await createEngine({
    dataDir: dir,
    workspaces: { default: KEY },
    now: () => NOW,
    // Only queried: no body workers.
    bodyWorkers: 0,
    ...storage,
  });
}, 120_000);

afterAll(async () => {
  await engine?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('every offset change since 1970 of every zone', () => {
  test('the tz data has the changes this test is about', () => {
    const zones = new Set(odd.map((t) => t.zone));
    for (const zone of ['Australia/Lord_Howe', 'Asia/Kathmandu', 'Africa/Monrovia']) {
      // Intl may list a zone under its older name (Asia/Katmandu).
      const listed = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions()
        .timeZone;
      expect(zones.has(listed)).toBe(true);
    }
    expect(all.length).toBeGreaterThan(10_000);
  });

  test('Hour and Minute series across each change, and Day series across a change of date, match the wall-clock oracle', async () => {
    let checked = 0;
    const failures: string[] = [];
    for (const { zone, at } of sampled) {
      for (const [granularity, w] of Object.entries(WINDOWS)) {
        const body = {
          api_key: KEY,
          collection: collectionOf(zone),
          graph_type: 'Single Line',
          IANA_time_zone: zone,
          granularity,
          // Windows are exclusive: these hold the seconds at - before … at + after.
          start: at - w.before - 1,
          end: at + w.after + 1,
          filters: [['zone', '=', zone]],
        };
        const answer = (await engine.query(body)) as { status: number; body: Envelope };
        const expected = referenceAnswer(eventsByZone.get(zone) ?? [], body, NOW, body.collection);
        checked++;
        if (answer.status !== 200) {
          failures.push(`${zone} ${at} ${granularity}: ${answer.status}`);
        } else if (JSON.stringify(answer.body.result) !== JSON.stringify(expected.result)) {
          failures.push(
            `${zone} ${new Date(at * 1000).toISOString()} ${granularity}: ${JSON.stringify(answer.body.result)} != ${JSON.stringify(expected.result)}`,
          );
        }
      }
    }
    expect(failures.slice(0, 5)).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(sampled.length * 2);
  }, 600_000);
});

// The plan is the engine's own code, the same under both drivers: checked in the duckdb project.
describe.skipIf(ON_CLICKHOUSE)(
  'the bucket plan at every offset change since 1970 of every zone',
  () => {
    // The SQL above runs on a sample of the ordinary changes; the plan it is built from (labels,
    // and keys as data: the same segments the SQL's CASE is written from) is checked at all.
    test('Hour and Minute plans label the rows as the wall clock does and put each edge second in its row', () => {
      const failures: string[] = [];
      let checked = 0;
      for (const { zone, at } of all) {
        for (const granularity of ['Hour', 'Minute'] as const) {
          const w = WINDOWS[granularity];
          const lo = at - w.before;
          const hi = at + w.after;
          const plan = planBuckets(granularity, zone, lo, hi);
          const oracle = wallRows(zone, granularity, lo, hi);
          const where = `${zone} ${new Date(at * 1000).toISOString()} ${granularity}`;
          checked++;
          const labels = plan.buckets.map((b) => b.label);
          if (JSON.stringify(labels) !== JSON.stringify(oracle.rows.map((r) => r.label))) {
            failures.push(`${where}: labels ${labels.join(', ')}`);
            continue;
          }
          const clock = plan.clock;
          if (!clock) {
            failures.push(`${where}: no clock`);
            continue;
          }
          const index = new Map(plan.buckets.map((b, i) => [b.key, i]));
          for (const row of oracle.rows) {
            for (const second of [row.start - 1, row.start]) {
              if (second < lo) continue;
              let offset = clock.segments[0]?.offset ?? 0;
              for (const s of clock.segments) if (s.from <= second) offset = s.offset;
              const key = Math.floor((second + offset) / clock.width);
              if (index.get(key) !== oracle.rowOf(second)) {
                failures.push(`${where}: second ${second} in row ${index.get(key)}`);
              }
            }
          }
        }
      }
      expect(failures.slice(0, 5)).toEqual([]);
      expect(checked).toBe(all.length * 2);
    }, 600_000);
  },
);

describe('a date the zone never had', () => {
  // Samoa moved across the date line: 2011-12-29 23:59:59 was followed by 2011-12-31 00:00.
  const zone = 'Pacific/Apia';
  const skipped = Date.UTC(2011, 11, 30, 10) / 1000;
  test.each(['Day', 'Week', 'Month'])('has no %s row of its own', async (granularity) => {
    const body = {
      api_key: KEY,
      collection: collectionOf(zone),
      graph_type: 'Single Line',
      IANA_time_zone: zone,
      granularity,
      start: skipped - 20 * 86_400,
      end: skipped + 20 * 86_400,
      filters: [['zone', '=', zone]],
    };
    const answer = (await engine.query(body)) as { status: number; body: Envelope };
    expect(answer.status).toBe(200);
    const labels = (answer.body.result as Array<{ timestamp: string }>).map((row) => row.timestamp);
    expect(labels).not.toContain('2011-12-30');
    expect(answer.body.result).toEqual(
      referenceAnswer(eventsByZone.get(zone) ?? [], body, NOW, body.collection).result,
    );
  });
});
