import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  type CollectionQuery,
  DEFAULT_COLLECTION,
  isSqlQuery,
  parseQueryRequest,
} from '@analytics-chart/protocol';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, test } from 'vitest';
import { planCollectionQuery } from '../src/collection/plan/collection-plan.ts';
import {
  MIN_ROLLUP_EVENTS,
  MIN_ROLLUP_SPANS,
  ROLLUP_ROW_COST,
  type RollupRequest,
  rollupRead,
} from '../src/collection/plan/rollup-eligibility.ts';
import { planBuckets } from '../src/collection/plan/time-buckets.ts';
import { rollupUses } from '../src/drivers/rollup-uses.ts';
import { createEngine } from '../src/index.ts';
import { appendRecords } from '../src/ingest/append-events.ts';
import { loadNdjson } from '../src/ingest/load-ndjson.ts';
import { StagedLoad } from '../src/ingest/staged-load.ts';
import { appendStaged, clusterCollection } from '../src/storage/duckdb/cluster-rows.ts';
import {
  coalesceRollups,
  MAX_KEY_VALUES,
  MERGE_AFTER_ROWS,
  ROLLUP_TABLE,
} from '../src/storage/duckdb/rollups.ts';
import { WorkspaceDb } from '../src/storage/duckdb/workspace-db.ts';
import {
  AUTO_MIN_QUERIES,
  MAX_AUTO_KEYS,
  MAX_REMEMBERED_NAMES,
  MAX_ROLLUP_KEYS,
} from '../src/storage/rollup-spec.ts';
import { RollupUsage } from '../src/storage/rollup-usage.ts';
import { API_KEY } from './helpers/engine-server.ts';

/**
 * Rollups (`storage/duckdb/rollups.ts`) hold exactly the events' counts per collection and
 * 15-minute span after every way events arrive or move, and the planner
 * (`collection/plan/rollup-eligibility.ts`) reads them only where buckets are whole spans.
 */

const dirs: string[] = [];
function tempDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `rollups-${name}-`));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const HOUR = 3600;
const DAY = 86_400;
const T2024 = Date.UTC(2024, 0, 1) / 1000;
/** A line per UTC day over the first 30 days of 2024, of workspace key `k`. */
const DAILY = {
  api_key: 'k',
  graph_type: 'Single Line',
  start: T2024 - 1,
  end: T2024 + 30 * DAY,
  IANA_time_zone: 'UTC',
  granularity: 'Day',
};

/**
 * The rows where rollups and the events disagree: counts per collection and span recomputed
 * from every event table, against the rollups' rows added up (independently of `rollups.ts`'s
 * span expression: the floor of a DOUBLE quotient, exact at these magnitudes).
 */
async function disagreements(db: WorkspaceDb): Promise<unknown[][]> {
  const raw = db.catalog
    .list()
    .flatMap((c) =>
      c.segments.map(
        (s) =>
          `SELECT ${c.id} AS collection_id, floor("timestamp" / 900)::BIGINT AS span FROM ${s.table}`,
      ),
    );
  const events = raw.length
    ? `SELECT collection_id, span, count(*) AS n FROM (${raw.join(' UNION ALL ')}) GROUP BY ALL`
    : 'SELECT 0 AS collection_id, 0::BIGINT AS span, 0 AS n WHERE FALSE';
  return db.read(async (conn) => {
    const reader = await conn.runAndReadAll(
      `WITH kept AS (SELECT collection_id, span, sum(n) AS n FROM ${ROLLUP_TABLE} GROUP BY ALL),
            counted AS (${events})
       SELECT * FROM kept FULL OUTER JOIN counted USING (collection_id, span)
       WHERE kept.n IS DISTINCT FROM counted.n LIMIT 5`,
    );
    return reader.getRows();
  });
}

/**
 * The same for rollups kept by the key `event` with the sums of `v` (events whose `event` is a
 * string or missing and whose `v` is a number or missing): count and sum per collection, span
 * and `event`, from the events' JSON, against the rollups' rows and their sums' parts added up.
 */
async function keyedDisagreements(db: WorkspaceDb): Promise<string[]> {
  const raw = db.catalog
    .list()
    .flatMap((c) =>
      c.segments.map(
        (s) =>
          `SELECT ${c.id} AS id, floor("timestamp" / 900)::BIGINT AS span, json_extract_string("json", '$.event') AS k, json_extract("json", '$.v')::DOUBLE AS v FROM ${s.table}`,
      ),
    );
  return db.read(async (conn) => {
    const counted = new Map<string, string>();
    if (raw.length) {
      const reader = await conn.runAndReadAll(
        `SELECT id, span, k, count(*), sum(v) FROM (${raw.join(' UNION ALL ')}) GROUP BY ALL`,
      );
      for (const [id, span, k, n, v] of reader.getRows()) {
        counted.set(`${id} ${span} ${k}`, `${n} ${v}`);
      }
    }
    const reader = await conn.runAndReadAll(
      `SELECT collection_id, span, k0, sum(n), sum(s0_d3), sum(s0_d2), sum(s0_d1), sum(s0_d0),
              flatten(list(s0_r) FILTER (WHERE s0_r IS NOT NULL)), sum(s0_n)
       FROM ${ROLLUP_TABLE} GROUP BY ALL`,
    );
    const wrong: string[] = [];
    for (const [id, span, k, n, t, h, m, l, r, count] of reader.getRowsJS()) {
      const big = (x: unknown) => BigInt((x ?? 0) as bigint);
      const grid = (big(t) << 186n) + (big(h) << 124n) + (big(m) << 62n) + big(l);
      const rest = ((r ?? []) as number[]).reduce((a, b) => a + b, 0);
      const v = Number(count) === 0 ? null : Number(grid) / 2 ** 90 + rest;
      const id_ = `${id} ${span} ${k}`;
      if (counted.get(id_) !== `${n} ${v}`) wrong.push(`${id_}: ${n} ${v} vs ${counted.get(id_)}`);
      counted.delete(id_);
    }
    for (const [id_, value] of counted) wrong.push(`${id_}: missing vs ${value}`);
    return wrong.slice(0, 5);
  });
}

async function rollupRows(db: WorkspaceDb): Promise<number> {
  return db.read(async (conn) => {
    const reader = await conn.runAndReadAll(`SELECT count(*) FROM ${ROLLUP_TABLE}`);
    return Number(reader.getRows()[0]?.[0]);
  });
}

async function hasRollupTable(db: WorkspaceDb): Promise<boolean> {
  return db.read(async (conn) => {
    const reader = await conn.runAndReadAll(
      `SELECT count(*) FROM duckdb_tables() WHERE schema_name = '_engine' AND table_name = 'rollup_15m'`,
    );
    return Number(reader.getRows()[0]?.[0]) === 1;
  });
}

describe('the planner reads rollups only where buckets are whole spans', () => {
  const window = (granularity: 'Minute' | 'Hour' | 'Day', zone: string, lo: number, hi: number) =>
    planBuckets(granularity, zone, lo, hi);
  /**
   * A Count's read over readable keys, with 15-minute spans; `request` changes any of it (another
   * aggregation, the collection's figures, a driver's bounds).
   */
  const countRead = (
    plan: ReturnType<typeof window> | null,
    lo: number,
    hi: number,
    request: Partial<RollupRequest> = {},
  ) =>
    rollupRead({
      aggregation: 'Count',
      readable: true,
      metricKept: false,
      plan,
      lo,
      hi,
      spanSeconds: 900,
      ...request,
    });

  test('Count per Hour in UTC over whole hours reads spans only', () => {
    const lo = T2024;
    const hi = T2024 + 30 * DAY - 1;
    const plan = window('Hour', 'UTC', lo, hi);
    expect(countRead(plan, lo, hi)).toEqual({
      firstSpan: lo / 900,
      lastSpan: (hi + 1) / 900 - 1,
      rawEdges: [],
    });
  });

  test('a window that starts and ends inside spans reads its edges from events', () => {
    const lo = T2024 + 100;
    const hi = T2024 + 30 * DAY + 1000;
    const plan = window('Day', 'America/Los_Angeles', lo, hi);
    expect(countRead(plan, lo, hi)).toEqual({
      firstSpan: T2024 / 900 + 1,
      lastSpan: (T2024 + 30 * DAY) / 900,
      rawEdges: [
        [lo, T2024 + 899],
        [T2024 + 30 * DAY + 900, hi],
      ],
    });
  });

  test(`a window of fewer than ${MIN_ROLLUP_SPANS} whole spans reads its events`, () => {
    const lo = T2024 - 1;
    const read = (spans: number) => {
      const hi = T2024 + spans * 900;
      const plan = window('Hour', 'UTC', lo, hi);
      return countRead(plan, lo, hi);
    };
    expect(read(MIN_ROLLUP_SPANS - 1)).toBeUndefined();
    expect(read(MIN_ROLLUP_SPANS)).toMatchObject({
      firstSpan: T2024 / 900,
      lastSpan: T2024 / 900 + MIN_ROLLUP_SPANS - 1,
    });
  });

  test(`a dense collection reads rollups once the whole spans hold ${MIN_ROLLUP_EVENTS} events`, () => {
    const lo = T2024 - 1;
    const read = (spans: number, eventsPerSpan: number | undefined) => {
      const hi = T2024 + spans * 900;
      return countRead(window('Hour', 'UTC', lo, hi), lo, hi, { eventsPerSpan });
    };
    // At 1,000 events a span, 200 spans hold the events that repay reading rollups, 199 do not.
    expect(read(288, 1000)).toMatchObject({ firstSpan: T2024 / 900 });
    expect(read(199, 1000)).toBeUndefined();
    expect(read(200, 1000)).toMatchObject({ firstSpan: T2024 / 900, lastSpan: T2024 / 900 + 199 });
    // Sparse or unknown: the four weeks still hold.
    expect(read(MIN_ROLLUP_SPANS - 1, 50)).toBeUndefined();
    expect(read(MIN_ROLLUP_SPANS - 1, undefined)).toBeUndefined();
    expect(read(MIN_ROLLUP_SPANS, 50)).toMatchObject({ firstSpan: T2024 / 900 });
  });

  test("a driver's own events and span bound replace the defaults, past four weeks too", () => {
    const lo = T2024 - 1;
    const read = (spans: number, eventsPerSpan: number | undefined) =>
      countRead(null, lo, T2024 + spans * 900, {
        eventsPerSpan,
        minEvents: 1_000_000,
        maxSpans: Number.POSITIVE_INFINITY,
      });
    // At 100 events a span, 10,000 spans hold a million: four weeks (2,688) are not enough.
    expect(read(9_999, 100)).toBeUndefined();
    expect(read(10_000, 100)).toMatchObject({ firstSpan: T2024 / 900 });
    expect(read(2 * MIN_ROLLUP_SPANS, 100)).toBeUndefined();
    // Unknown events per span: the four weeks.
    expect(read(MIN_ROLLUP_SPANS - 1, undefined)).toBeUndefined();
    expect(read(MIN_ROLLUP_SPANS, undefined)).toMatchObject({ firstSpan: T2024 / 900 });
  });

  test(`rollups whose rows cost ${ROLLUP_ROW_COST} events each are read only where they cost less than the events`, () => {
    const lo = T2024 - 1;
    const read = (spans: number, eventsPerSpan: number | undefined, rowsPerEvent: number) =>
      countRead(null, lo, T2024 + spans * 900, {
        aggregation: 'Sum',
        metricKept: true,
        eventsPerSpan,
        rowsPerEvent,
      });
    // A row per two events (or per three) costs as much as the events or more: never, however long.
    expect(read(100_000, 1000, 0.5)).toBeUndefined();
    expect(read(100_000, undefined, 1 / 3)).toBeUndefined();
    // Fewer rows: the windows the events per span alone allow (200 spans hold 200,000 at 1,000).
    expect(read(199, 1000, 0.3)).toBeUndefined();
    expect(read(200, 1000, 0.3)).toMatchObject({
      firstSpan: T2024 / 900,
      lastSpan: T2024 / 900 + 199,
    });
    // Unknown density: the four weeks.
    expect(read(MIN_ROLLUP_SPANS - 1, undefined, 0.3)).toBeUndefined();
    expect(read(MIN_ROLLUP_SPANS, undefined, 0.3)).toMatchObject({ firstSpan: T2024 / 900 });
  });

  test('Nepal (+5:45) and India (+5:30) are whole quarter hours; Liberia in 1971 (-0:44:30) is not', () => {
    const lo = T2024;
    const hi = T2024 + 30 * DAY - 1;
    for (const zone of ['Asia/Kathmandu', 'Asia/Kolkata', 'Pacific/Chatham']) {
      const plan = window('Hour', zone, lo, hi);
      expect(countRead(plan, lo, hi)).toBeDefined();
    }
    const lo1971 = Date.UTC(1971, 5, 1) / 1000;
    const plan = window('Day', 'Africa/Monrovia', lo1971, lo1971 + 30 * DAY - 1);
    expect(countRead(plan, lo1971, lo1971 + 30 * DAY - 1)).toBeUndefined();
  });

  test('Minute buckets, percentiles and what rollups do not hold read events', () => {
    const lo = T2024;
    const hi = T2024 + 30 * DAY - 1;
    // Minute buckets over such a window pass the bucket cap no more: a shorter one's plan, whose width alone decides.
    const minute = window('Minute', 'UTC', lo, lo + 12 * DAY - 1);
    const hour = window('Hour', 'UTC', lo, hi);
    const read = (
      aggregation: 'Count' | 'Sum' | 'P90',
      readable: boolean,
      plan = hour,
      metricKept = true,
    ) => rollupRead({ aggregation, readable, metricKept, plan, lo, hi, spanSeconds: 900 });
    expect(read('Count', true, minute)).toBeUndefined();
    expect(read('P90', true)).toBeUndefined();
    expect(read('Count', false)).toBeUndefined();
    expect(read('Sum', false)).toBeUndefined();
    expect(read('Sum', true, hour, false)).toBeUndefined();
    expect(read('Sum', true)).toBeDefined();
    expect(read('Count', true)).toBeDefined();
  });
});

describe('rollups hold the events’ counts', () => {
  test('a Count query reads the rollups: a row added there shows in the answer, a Sum is unmoved', async () => {
    const dataDir = tempDir('read');
    const open = () =>
      createEngine({
        rollupReads: 'always',
        dataDir,
        workspaces: { default: 'k' },
        rollups: true,
        now: () => T2024 + 30 * DAY,
        bodyWorkers: 0,
      });
    let engine = await open();
    for (let i = 0; i < 48; i++) {
      expect(
        (await engine.log({ api_key: 'k', timestamp: T2024 + i * HOUR, json: { v: 1 } })).status,
      ).toBe(200);
    }
    const query = (aggregation: string) =>
      engine.query({
        ...DAILY,
        aggregation,
        metric: 'v',
      });
    const before = await query('Count');
    expect(before.body).toMatchObject({ metadata: { combined: 48 } });
    await engine.close();
    // Tampering with the rollups (never done but here) shows which statement answered.
    const db = await WorkspaceDb.open(join(dataDir, 'default.duckdb'), { rollups: true });
    const id = db.catalog.get(DEFAULT_COLLECTION)?.id;
    // One event in each of 48 spans: the density the planner weighs windows by.
    expect(db.catalog.get(DEFAULT_COLLECTION)?.rollup?.eventsPerSpan.get(id as number)).toBe(1);
    await db.write(async (tx) => {
      await tx.conn.run(
        `INSERT INTO ${ROLLUP_TABLE} VALUES (${id}, ${(T2024 + DAY) / 900 + 3}, 1000)`,
      );
    });
    await db.close();
    engine = await open();
    const count = await query('Count');
    const { result, metadata } = count.body as {
      result: Array<{ Count: number }>;
      metadata: { combined: number };
    };
    expect(result).toHaveLength(30);
    expect(result.slice(0, 3)).toMatchObject([{ Count: 24 }, { Count: 1024 }, { Count: 0 }]);
    expect(metadata.combined).toBe(1048);
    expect((await query('Sum')).body).toMatchObject({ metadata: { combined: 48 } });
    await engine.close();
  });

  test('a collection with about a rollup row per event reads its events, one with few rows its rollups', async () => {
    const dataDir = tempDir('weigh');
    const SPEC = { keys: ['e'], sums: [] };
    const open = (rollupReads?: 'always') =>
      createEngine({
        ...(rollupReads ? { rollupReads } : {}),
        dataDir,
        workspaces: { default: 'k' },
        rollups: { default: SPEC },
        now: () => T2024 + 40 * DAY,
        bodyWorkers: 0,
      });
    // Over 40 days, one event an hour in `sparse` (a row each) and 20 of one key value in `dense`;
    // then one more row in each, in the window's second day, that only a rollup read adds.
    const db = await WorkspaceDb.open(join(dataDir, 'default.duckdb'), { rollups: SPEC });
    await db.write(async (tx) => {
      for (const [name, perHour] of [
        ['sparse', 1],
        ['dense', 20],
      ] as const) {
        const records = Array.from({ length: 40 * 24 * perHour }, (_, i) => ({
          timestamp: T2024 + Math.floor(i / perHour) * HOUR,
          payload: '{"e":"x"}',
        }));
        const collection = await tx.collection(name);
        await appendRecords(tx, collection, records);
      }
    });
    await db.write(async (tx) => {
      for (const name of ['sparse', 'dense']) {
        const id = db.catalog.get(name)?.id as number;
        await tx.conn.run(
          `INSERT INTO ${ROLLUP_TABLE} (collection_id, span, k0, n) VALUES (${id}, ${(T2024 + DAY) / 900 + 1}, 'x', 1)`,
        );
      }
    });
    await db.close();
    const total = async (collection: string) => {
      const answer = await engine.query({
        api_key: 'k',
        collection,
        graph_type: 'Single Value',
        aggregation: 'Count',
        start: T2024 - 1,
        end: T2024 + 30 * DAY - 1,
        IANA_time_zone: 'UTC',
      });
      return (answer.body as { result: Array<{ Count: number }> }).result[0]?.Count;
    };
    let engine = await open();
    // 30 days of hours: the events' counts in `sparse`, the rollups' (with the row) in `dense`.
    expect(await total('sparse')).toBe(30 * 24);
    expect(await total('dense')).toBe(30 * 24 * 20 + 1);
    await engine.close();
    // Told to read rollups wherever they answer, `sparse` reads them too.
    engine = await open('always');
    expect(await total('sparse')).toBe(30 * 24 + 1);
    await engine.close();
  });

  test('Single Value, Table, Bar Chart and Pie Chart read them too, and only where they hold what is asked', async () => {
    const dataDir = tempDir('whole');
    const open = () =>
      createEngine({
        rollupReads: 'always',
        dataDir,
        workspaces: { default: 'k' },
        rollups: { default: { keys: ['event'], sums: ['v'] } },
        now: () => T2024 + 30 * DAY,
        bodyWorkers: 0,
      });
    let engine = await open();
    // 90 events every 7 hours: e0, e1, e2 in turn, v = i (e0 sums 1305, e1 1335, e2 1365), other 0 or 1.
    const jsons = Array.from({ length: 90 }, (_, i) => ({
      event: `e${i % 3}`,
      v: i,
      other: i % 2,
    }));
    for (const [i, json] of jsons.entries()) {
      const answer = await engine.log({ api_key: 'k', timestamp: T2024 + i * 7 * HOUR, json });
      expect(answer.status).toBe(200);
    }
    const window = { api_key: 'k', start: T2024 - 1, end: T2024 + 30 * DAY, IANA_time_zone: 'UTC' };
    const requests: Array<Record<string, unknown>> = [
      { graph_type: 'Single Value', aggregation: 'Count' },
      {
        graph_type: 'Single Value',
        aggregation: 'Sum',
        metric: 'v',
        filters: [['event', '=', 'e1']],
      },
      { graph_type: 'Table', aggregation: 'Count', split: 'event' },
      { graph_type: 'Bar Chart', aggregation: 'Avg', metric: 'v', split: 'event' },
      {
        graph_type: 'Pie Chart',
        aggregation: 'Sum',
        metric: 'v',
        split: 'event',
        filters: [['event', '≠', 'e0']],
      },
      // What the rollups do not hold, a percentile and ten days (fewer than four weeks of spans) read the events.
      { graph_type: 'Table', aggregation: 'Count', split: 'other' },
      { graph_type: 'Single Value', aggregation: 'Count', filters: [['other', '=', 1]] },
      { graph_type: 'Single Value', aggregation: 'P50', metric: 'v' },
      { graph_type: 'Single Value', aggregation: 'Count', end: T2024 + 10 * DAY },
    ];
    const results = async () => {
      const out: unknown[] = [];
      for (const request of requests) {
        const answer = await engine.query({ ...window, ...request });
        expect(answer.status).toBe(200);
        out.push((answer.body as { result: unknown }).result);
      }
      return out;
    };
    const raw = [
      [{ Count: 90 }],
      [{ 'Sum(v)': 1335 }],
      [
        { event: 'e0', Count: 30 },
        { event: 'e1', Count: 30 },
        { event: 'e2', Count: 30 },
      ],
      [
        { event: 'e2', 'Avg(v)': 45.5 },
        { event: 'e1', 'Avg(v)': 44.5 },
        { event: 'e0', 'Avg(v)': 43.5 },
      ],
      [
        { event: 'e2', 'Sum(v)': 1365 },
        { event: 'e1', 'Sum(v)': 1335 },
      ],
      [
        { other: '0', Count: 45 },
        { other: '1', Count: 45 },
      ],
      [{ Count: 45 }],
      [{ 'P50(v)': 44.5 }],
      // Events 0 to 34 are within the first ten days.
      [{ Count: 35 }],
    ];
    expect(await results()).toEqual(raw);
    await engine.close();
    // A row of 1,000 `e1` events on day 2, one with v 1e6, written into the rollups by hand.
    const db = await WorkspaceDb.open(join(dataDir, 'default.duckdb'), {
      rollups: { keys: ['event'], sums: ['v'] },
    });
    const id = db.catalog.get(DEFAULT_COLLECTION)?.id;
    await db.write(async (tx) => {
      await tx.conn.run(
        `INSERT INTO ${ROLLUP_TABLE} (collection_id, span, k0, n, s0_d0, s0_d1, s0_d2, s0_d3, s0_r, s0_n)
         VALUES (${id}, ${(T2024 + DAY) / 900 + 3}, 'e1', 1000, 0, 0, 0, 0, [1e6], 1)`,
      );
    });
    await db.close();
    engine = await open();
    expect(await results()).toEqual([
      [{ Count: 1090 }],
      [{ 'Sum(v)': 1_001_335 }],
      [
        { event: 'e1', Count: 1030 },
        { event: 'e0', Count: 30 },
        { event: 'e2', Count: 30 },
      ],
      [
        { event: 'e1', 'Avg(v)': 1_001_335 / 31 },
        { event: 'e2', 'Avg(v)': 45.5 },
        { event: 'e0', 'Avg(v)': 43.5 },
      ],
      [
        { event: 'e1', 'Sum(v)': 1_001_335 },
        { event: 'e2', 'Sum(v)': 1365 },
      ],
      ...raw.slice(5),
    ]);
    await engine.close();
  });

  test('through logs, bulk logs, late events, compaction, loads and turning them off and on', async () => {
    const dataDir = tempDir('agree');
    const file = join(dataDir, 'default.duckdb');
    let engine = await createEngine({
      rollupReads: 'always',
      dataDir,
      workspaces: { default: 'k' },
      rollups: true,
      bodyWorkers: 0,
    });
    const spread = (n: number, from: number, step: number) =>
      Array.from({ length: n }, (_, i) => from + i * step);
    // One event at a time (new keys take the writer's path, known ones the appenders').
    for (const [i, ts] of spread(60, T2024 - 1, 451).entries()) {
      const json = i % 10 === 0 ? { [`k${i}`]: i, event: 'a' } : { event: 'b' };
      expect((await engine.log({ api_key: 'k', timestamp: ts, json })).status).toBe(200);
    }
    for (const ts of spread(5, T2024 + 7 * DAY, 899)) {
      const answer = await engine.bulkLog({
        api_key: 'k',
        collection: 'other',
        timestamp: ts,
        jsons: [{ event: 'a' }, { event: 'b' }, { event: 'c' }],
      });
      expect(answer.status).toBe(200);
    }
    // Late events, in spans that already hold some.
    for (const ts of [T2024 + 1, T2024 + 899, T2024 + 900, 0, 899]) {
      expect(
        (await engine.log({ api_key: 'k', timestamp: ts, json: { event: 'late' } })).status,
      ).toBe(200);
    }
    await engine.close();

    let db = await WorkspaceDb.open(file, { rollups: true });
    expect(await disagreements(db)).toEqual([]);
    await clusterCollection(db, DEFAULT_COLLECTION, { field: 'event' });
    expect(await disagreements(db)).toEqual([]);
    await db.close();

    // Loads, written as they go and staged then ordered in.
    const staging = join(dataDir, 'staging');
    mkdirSync(staging);
    const ndjson = join(dataDir, 'events.ndjson');
    writeFileSync(
      ndjson,
      spread(400, T2024 + 3 * DAY, 97)
        .map((ts, i) => JSON.stringify({ timestamp: ts, json: { event: `e${i % 3}`, n: i } }))
        .join('\n'),
    );
    db = await WorkspaceDb.open(file, { rollups: true, stagingDir: staging });
    expect((await loadNdjson(db, DEFAULT_COLLECTION, ndjson, { workers: 1 })).events).toBe(400);
    expect(await disagreements(db)).toEqual([]);
    // The CLI's clustered load: the staged chunks typed and ordered straight into the collection.
    const staged = new StagedLoad(db, 'staged');
    expect((await loadNdjson(db, 'staged', ndjson, { workers: 1, staged })).events).toBe(400);
    await appendStaged(db, 'staged', staged.segments(), { field: 'event' });
    expect(await disagreements(db)).toEqual([]);
    await db.close();

    // Unset keeps them up; off drops them; on again rebuilds them, one row per span.
    db = await WorkspaceDb.open(file);
    expect(await hasRollupTable(db)).toBe(true);
    await db.write(async (tx) => {
      await appendRecords(tx, await tx.collection('tool'), [
        { timestamp: T2024 + 42, payload: '{"event":"tool"}' },
      ]);
    });
    expect(await disagreements(db)).toEqual([]);
    await db.close();
    db = await WorkspaceDb.open(file, { rollups: false });
    expect(await hasRollupTable(db)).toBe(false);
    await db.close();
    engine = await createEngine({ dataDir, workspaces: { default: 'k' }, bodyWorkers: 0 });
    expect(
      (await engine.log({ api_key: 'k', timestamp: T2024 + 5, json: { event: 'off' } })).status,
    ).toBe(200);
    await engine.close();
    db = await WorkspaceDb.open(file, { rollups: true });
    expect(await disagreements(db)).toEqual([]);
    const spans = await db.read(async (conn) => {
      const r = await conn.runAndReadAll(
        `SELECT count(DISTINCT (collection_id, span)) FROM ${ROLLUP_TABLE}`,
      );
      return Number(r.getRows()[0]?.[0]);
    });
    expect(await rollupRows(db)).toBe(spans);
    await db.close();
  }, 120_000);

  test('kept by a key and a sum: logs, late events, a restart, compaction and loads agree; a key past its cap stops', async () => {
    const dataDir = tempDir('keyed');
    const file = join(dataDir, 'default.duckdb');
    const open = (keys: string[]) =>
      createEngine({
        rollupReads: 'always',
        dataDir,
        workspaces: { default: 'k' },
        rollups: { default: { keys, sums: ['v'] } },
        now: () => T2024 + 30 * DAY,
        bodyWorkers: 0,
      });
    let engine = await open(['event']);
    for (let i = 0; i < 40; i++) {
      const json = { event: `e${i % 3}`, ...(i % 4 ? { v: i / 10 } : {}) };
      expect((await engine.log({ api_key: 'k', timestamp: T2024 + i * 451, json })).status).toBe(
        200,
      );
    }
    const bulk = await engine.bulkLog({
      api_key: 'k',
      timestamp: T2024 + DAY,
      jsons: [{ event: 'e1', v: 1e-30 }, { v: 3 }, { event: 'e2', v: 2 ** 100 }],
    });
    expect(bulk.status).toBe(200);
    // Late events, in spans that already hold some, then a restart that keeps the file's keys.
    for (const ts of [T2024 + 1, T2024 + 900, 899]) {
      const json = { event: 'e0', v: 0.3 };
      expect((await engine.log({ api_key: 'k', timestamp: ts, json })).status).toBe(200);
    }
    await engine.close();
    const staging = join(dataDir, 'staging');
    mkdirSync(staging);
    let db = await WorkspaceDb.open(file, { rollups: true, stagingDir: staging });
    expect(await keyedDisagreements(db)).toEqual([]);
    await clusterCollection(db, DEFAULT_COLLECTION, { field: 'event' });
    expect(await keyedDisagreements(db)).toEqual([]);
    const ndjson = join(dataDir, 'events.ndjson');
    writeFileSync(
      ndjson,
      Array.from({ length: 200 }, (_, i) =>
        JSON.stringify({ timestamp: T2024 + i * 97, json: { event: `e${i % 4}`, v: i } }),
      ).join('\n'),
    );
    const staged = new StagedLoad(db, DEFAULT_COLLECTION);
    expect((await loadNdjson(db, DEFAULT_COLLECTION, ndjson, { workers: 1, staged })).events).toBe(
      200,
    );
    await appendStaged(db, DEFAULT_COLLECTION, staged.segments(), { field: 'event' });
    expect(await loadNdjson(db, 'plain', ndjson, { workers: 1 })).toMatchObject({ events: 200 });
    expect(await keyedDisagreements(db)).toEqual([]);
    await db.close();
    // Another key rebuilds them; one with more values than the cap stops being rolled up.
    engine = await open(['event', 'u']);
    const many = Array.from({ length: MAX_KEY_VALUES + 6 }, (_, i) => ({ event: 'e9', u: i }));
    expect(
      (await engine.bulkLog({ api_key: 'k', timestamp: T2024 + 2 * DAY, jsons: many })).status,
    ).toBe(200);
    await engine.close();
    engine = await open(['event', 'u']);
    const filtered = await engine.query({
      ...DAILY,
      aggregation: 'Count',
      filters: [['u', '=', 5]],
    });
    expect(filtered.body).toMatchObject({ metadata: { combined: 1 } });
    await engine.close();
    db = await WorkspaceDb.open(file);
    expect(await keyedDisagreements(db)).toEqual([]);
    const kept = await db.read(async (conn) => {
      const r = await conn.runAndReadAll(
        `SELECT name, dropped FROM _engine.rollup_spec ORDER BY role, position`,
      );
      return r.getRowsJS();
    });
    expect(kept).toEqual([
      ['event', false],
      ['u', true],
      ['v', false],
    ]);
    expect(await rollupRows(db)).toBeLessThan(200);
    await db.close();
  }, 120_000);

  test('a merge that stops a key past its cap and then rolls back leaves the key written', async () => {
    const file = join(tempDir('rollback'), 'default.duckdb');
    const db = await WorkspaceDb.open(file, { rollups: { keys: ['event'], sums: ['v'] } });
    const records = (from: number, n: number, event: (i: number) => string) =>
      Array.from({ length: n }, (_, i) => ({
        timestamp: T2024 + (from + i) * 60,
        payload: JSON.stringify({ event: event(i), v: i }),
      }));
    try {
      await expect(
        db.write(async (tx) => {
          const entry = await tx.collection(DEFAULT_COLLECTION);
          await appendRecords(
            tx,
            entry,
            records(0, MAX_KEY_VALUES + 5, (i) => `e${i}`),
          );
          await coalesceRollups(tx.conn, entry.rollup);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      // The file still keeps the key: what is written next keeps its values.
      await db.write(async (tx) => {
        const entry = await tx.collection(DEFAULT_COLLECTION);
        await appendRecords(
          tx,
          entry,
          records(100, 10, (i) => `f${i % 2}`),
        );
      });
      expect(await keyedDisagreements(db)).toEqual([]);
    } finally {
      await db.close();
    }
  });

  test('under a stream of small batches the writer merges rows, so a span keeps few and answers stay equal', async () => {
    const on = tempDir('stream-on');
    const off = tempDir('stream-off');
    const events = 2 * MERGE_AFTER_ROWS + 200;
    const step = 7;
    const timestamps = Array.from({ length: events }, (_, i) => T2024 + i * step);
    const json = (i: number) => ({ event: i % 3 === 0 ? 'a' : 'b' });
    // The same events without rollups, written at once.
    const offDb = await WorkspaceDb.open(join(off, 'default.duckdb'));
    await offDb.write(async (tx) => {
      const records = timestamps.map((timestamp, i) => ({
        timestamp,
        payload: JSON.stringify(json(i)),
      }));
      await appendRecords(tx, await tx.collection(DEFAULT_COLLECTION), records);
    });
    await offDb.close();
    const engine = await createEngine({
      rollupReads: 'always',
      dataDir: on,
      workspaces: { default: 'k' },
      rollups: true,
      bodyWorkers: 0,
    });
    const reference = await createEngine({
      rollupReads: 'always',
      dataDir: off,
      workspaces: { default: 'k' },
      bodyWorkers: 0,
    });
    // Long enough a window that its Counts read rollups (MIN_ROLLUP_SPANS).
    const window = { start: T2024 - 1, end: T2024 + 30 * DAY };
    // One event per request, a live stream's shape: each batch appends a row to its span.
    for (const [i, timestamp] of timestamps.entries()) {
      expect((await engine.log({ api_key: 'k', timestamp, json: json(i) })).status).toBe(200);
      if (i % 100 === 99) {
        // Read between merges as well as after them: every event so far counted once.
        const answer = await engine.query({
          api_key: 'k',
          graph_type: 'Single Line',
          ...window,
          IANA_time_zone: 'UTC',
          granularity: 'Day',
          aggregation: 'Count',
        });
        expect(answer.body).toMatchObject({ metadata: { combined: i + 1 } });
      }
    }
    for (const [granularity, zone] of [
      ['Hour', 'UTC'],
      ['Hour', 'Asia/Kathmandu'],
      ['Day', 'America/Los_Angeles'],
    ] as const) {
      const [a, b] = await Promise.all(
        [engine, reference].map((e) =>
          e.query({
            api_key: 'k',
            graph_type: 'Single Line',
            ...window,
            IANA_time_zone: zone,
            granularity,
            aggregation: 'Count',
          }),
        ),
      );
      expect(a?.status).toBe(200);
      expect(JSON.stringify(a?.body)).toBe(JSON.stringify(b?.body));
    }
    await Promise.all([engine.close(), reference.close()]);
    // Opened without the option, the file's rows stay as the server left them.
    const db = await WorkspaceDb.open(join(on, 'default.duckdb'));
    try {
      expect(await disagreements(db)).toEqual([]);
      const [spans, most] = await db.read(async (conn) => {
        const r = await conn.runAndReadAll(
          `SELECT count(*), max(rows) FROM (SELECT count(*) AS rows FROM ${ROLLUP_TABLE} GROUP BY collection_id, span)`,
        );
        return (r.getRows()[0] ?? []).map(Number);
      });
      expect(spans).toBe(Math.ceil((events * step) / 900));
      // Without the merges every batch would have left its own row: `events` rows in all.
      expect(await rollupRows(db)).toBeLessThanOrEqual((spans ?? 0) + MERGE_AFTER_ROWS);
      expect(most).toBeLessThanOrEqual(MERGE_AFTER_ROWS);
    } finally {
      await db.close();
    }
  }, 120_000);

  test.each([
    ['counts', undefined],
    ['counts by event and sums of v', { keys: ['event'], sums: ['v'] }],
  ])(
    'a SIGKILL of the serving process mid-ingest leaves rollups (%s) and events in agreement',
    async (_, spec) => {
      const dataDir = tempDir('kill');
      const loader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
      const child = spawn(
        process.execPath,
        [
          '--import',
          loader,
          join(import.meta.dirname, 'helpers/serve-child.ts'),
          dataDir,
          '--rollups',
          ...(spec ? [JSON.stringify(spec)] : []),
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      try {
        const url = await new Promise<string>((resolve, reject) => {
          child.stdout.on('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
          child.once('exit', (code) => reject(new Error(`child exited with ${code}`)));
        });
        let acknowledged = 0;
        let killed = false;
        const send = async (i: number) => {
          try {
            const body =
              i % 5 === 0
                ? { api_key: API_KEY, timestamp: T2024 + i * 97, jsons: [{ i }, { i: -i - 1 }] }
                : {
                    api_key: API_KEY,
                    timestamp: T2024 + i * 97,
                    json: { i, [`k${i % 7}`]: i, event: `e${i % 3}`, v: i % 2 ? i : i / 4 },
                  };
            const response = await fetch(`${url}/api/${i % 5 === 0 ? 'bulk-log' : 'log'}`, {
              method: 'POST',
              body: JSON.stringify(body),
            });
            if (response.status === 200 && !killed) acknowledged++;
          } catch {
            // In flight when the process died.
          }
          if (acknowledged >= 150 && !killed) {
            killed = true;
            child.kill('SIGKILL');
          }
        };
        await Promise.all(Array.from({ length: 400 }, (_, i) => send(i)));
        expect(killed).toBe(true);
        await new Promise((resolve) =>
          child.exitCode !== null || child.signalCode ? resolve(null) : child.once('exit', resolve),
        );
        const db = await WorkspaceDb.open(join(dataDir, 'default.duckdb'), { rollups: true });
        try {
          expect(await hasRollupTable(db)).toBe(true);
          expect(await disagreements(db)).toEqual([]);
          if (spec) expect(await keyedDisagreements(db)).toEqual([]);
          // At least the acknowledged events are counted (each bulk log holds two).
          const counted = await db.read(async (conn) => {
            const r = await conn.runAndReadAll(`SELECT sum(n) FROM ${ROLLUP_TABLE}`);
            return Number(r.getRows()[0]?.[0]);
          });
          expect(counted).toBeGreaterThanOrEqual(acknowledged);
        } finally {
          await db.close();
        }
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    },
    60_000,
  );

  test('sums near the limbs’ maxima carry exactly through ingest, a merge and a rebuild', async () => {
    const onDir = tempDir('carry');
    const open = (dataDir: string, rollups: boolean) =>
      createEngine({
        rollupReads: 'always',
        dataDir,
        workspaces: { default: 'k' },
        ...(rollups ? { rollups: { default: { keys: [], sums: ['v'] } } } : {}),
        now: () => T2024 + 30 * DAY,
        bodyWorkers: 0,
      });
    // Per day, one span of 3,000 values (significand k, a power of two e): a limb near 2^62
    // in each of |v|·2^90's three, across two, and sums that are negative or of mixed signs.
    const top = 2 ** 53 - 1;
    const kinds: Array<(i: number) => { k: number; e: number; sign: number }> = [
      (i) => ({ k: top - i, e: -81, sign: 1 }),
      (i) => ({ k: top - i, e: -19, sign: 1 }),
      (i) => ({ k: top - i, e: 43, sign: 1 }),
      (i) => ({ k: top - i, e: -50, sign: 1 }),
      (i) => ({ k: top - i, e: -81, sign: -1 }),
      (i) => ({ k: top - 7 * i, e: 43, sign: i % 3 ? -1 : 1 }),
      (i) => ({ k: top - i, e: -19, sign: i % 2 ? -1 : 1 }),
    ];
    // Exact sums, as integers times 2^-90 (Number() of a BigInt rounds once, to nearest).
    const expected: number[] = [];
    let on = await open(onDir, true);
    const off = await open(tempDir('carry-off'), false);
    for (const [d, kind] of kinds.entries()) {
      let grid = 0n;
      const values = Array.from({ length: 3000 }, (_, i) => {
        const { k, e, sign } = kind(i);
        grid += BigInt(sign) * (BigInt(k) << BigInt(e + 90));
        return sign * k * 2 ** e;
      });
      expected.push(Number(grid) / 2 ** 90);
      // Three batches: three rollup rows in the span until they are merged.
      for (let b = 0; b < 3; b++) {
        const jsons = values.slice(b * 1000, (b + 1) * 1000).map((v) => ({ v }));
        for (const engine of [on, off]) {
          const timestamp = T2024 + d * DAY + 100 + b;
          expect((await engine.bulkLog({ api_key: 'k', timestamp, jsons })).status).toBe(200);
        }
      }
    }
    const query = (engine: typeof on, aggregation: string) =>
      engine.query({
        ...DAILY,
        aggregation,
        metric: 'v',
      });
    const sums = (answer: { body: unknown }) =>
      (answer.body as { result: Array<Record<string, number>> }).result.map((r) => r['Sum(v)']);
    const wanted = await Promise.all(['Sum', 'Avg'].map((a) => query(off, a)));
    expect(sums(wanted[0] as { body: unknown }).slice(0, kinds.length)).toEqual(expected);
    const agree = async () => {
      for (const [i, aggregation] of ['Sum', 'Avg'].entries()) {
        expect(await query(on, aggregation)).toEqual(wanted[i]);
      }
    };
    // Appended rows (JavaScript's digits), merged rows at a restart, and rebuilt ones (SQL's).
    await agree();
    await on.close();
    on = await open(onDir, true);
    await agree();
    await on.close();
    await (await open(onDir, false)).close();
    on = await open(onDir, true);
    await agree();
    await on.close();
    await off.close();
    const db = await WorkspaceDb.open(join(onDir, 'default.duckdb'));
    const digits = await db.read(async (conn) => {
      const r = await conn.runAndReadAll(
        `SELECT count(*), min(least(s0_d0, s0_d1, s0_d2)) >= 0,
                max(greatest(s0_d0, s0_d1, s0_d2)) < (2::HUGEINT << 61), min(s0_d3), max(s0_d3)
         FROM ${ROLLUP_TABLE}`,
      );
      return r.getRowsJS()[0];
    });
    await db.close();
    // One row per span, the top digit in use both ways.
    expect(digits?.slice(0, 3)).toEqual([BigInt(kinds.length), true, true]);
    expect(Number(digits?.[3])).toBeLessThan(0);
    expect(Number(digits?.[4])).toBeGreaterThan(0);
  }, 60_000);

  test('a file whose rollups keep the older form (HUGEINT limb sums) rebuilds them from its events on open', async () => {
    const dataDir = tempDir('old-form');
    const file = join(dataDir, 'default.duckdb');
    const open = (rollups: boolean) =>
      createEngine({
        rollupReads: 'always',
        dataDir: rollups ? dataDir : tempDir('old-form-off'),
        workspaces: { default: 'k' },
        ...(rollups ? { rollups: { default: { keys: ['event'], sums: ['v'] } } } : {}),
        now: () => T2024 + 30 * DAY,
        bodyWorkers: 0,
      });
    const on = await open(true);
    const off = await open(false);
    for (let i = 0; i < 300; i++) {
      const json = { event: `e${i % 3}`, ...(i % 5 ? { v: (i % 2 ? -1 : 1) * (i / 7) } : {}) };
      for (const engine of [on, off]) {
        const timestamp = T2024 + i * 2351;
        expect((await engine.log({ api_key: 'k', timestamp, json })).status).toBe(200);
      }
    }
    await on.close();
    // The table as the engine wrote it before (the grid sum's top three limbs, the highest
    // holding what lies above 2^124), with a row the events do not have: only a rebuild drops it.
    const instance = await DuckDBInstance.create(file);
    const conn = await instance.connect();
    await conn.run(
      `CREATE TABLE _engine.rollup_old AS SELECT collection_id, span, k0, n,
         s0_d3::HUGEINT * (2::HUGEINT << 61) + s0_d2 AS s0_h, s0_d1::HUGEINT AS s0_m,
         s0_d0::HUGEINT AS s0_l, s0_r, s0_n FROM ${ROLLUP_TABLE}`,
    );
    await conn.run(
      `INSERT INTO _engine.rollup_old SELECT collection_id, span, k0, 1000, 0, 0, 0, NULL, 0
       FROM _engine.rollup_old LIMIT 1`,
    );
    await conn.run(`DROP TABLE ${ROLLUP_TABLE}`);
    await conn.run('ALTER TABLE _engine.rollup_old RENAME TO rollup_15m');
    conn.closeSync();
    instance.closeSync();
    const reopened = await open(true);
    const shapes = [
      { aggregation: 'Count' },
      { aggregation: 'Sum', metric: 'v' },
      { aggregation: 'Avg', metric: 'v', filters: [['event', '=', 'e1']] },
      { graph_type: 'Multi Line', split: 'event', aggregation: 'Sum', metric: 'v' },
    ];
    for (const shape of shapes) {
      const body = {
        ...DAILY,
        ...shape,
      };
      const wanted = await off.query(body);
      expect(wanted.status).toBe(200);
      expect(await reopened.query(body)).toEqual(wanted);
    }
    await reopened.close();
    await off.close();
    const db = await WorkspaceDb.open(file);
    const types = await db.read(async (conn) => {
      const r = await conn.runAndReadAll(
        `SELECT column_name, data_type FROM duckdb_columns()
         WHERE schema_name = '_engine' AND table_name = 'rollup_15m' AND column_name LIKE 's0_%'
         ORDER BY column_name`,
      );
      return r.getRowsJS();
    });
    await db.close();
    expect(types).toEqual([
      ['s0_d0', 'BIGINT'],
      ['s0_d1', 'BIGINT'],
      ['s0_d2', 'BIGINT'],
      ['s0_d3', 'BIGINT'],
      ['s0_n', 'BIGINT'],
      ['s0_r', 'DOUBLE[]'],
    ]);
  }, 60_000);
});

describe('automatic rollup keys', () => {
  const now = T2024 + 40 * DAY;
  /** A Count per Day over the window every request below shares, which each one amends. */
  const daily = {
    graph_type: 'Single Line',
    start: T2024 - 1,
    end: now,
    IANA_time_zone: 'UTC',
    granularity: 'Day',
    aggregation: 'Count',
  };
  const plan = (request: Record<string, unknown>) => {
    const parsed = parseQueryRequest({ ...daily, ...request });
    if (!parsed.ok || isSqlQuery(parsed.value)) throw new Error('not a collection query');
    return planCollectionQuery(parsed.value as CollectionQuery, now);
  };

  test('a query counts the keys and metric rollups would need, only where rollups could answer it', () => {
    expect(
      rollupUses(
        plan({
          graph_type: 'Ratio Line',
          aggregation: 'Avg',
          metric: 'v',
          split: 'plan',
          filters: [['country', '=', 'fr']],
          numerator_filters: [['event', '≠', 'x']],
          denominator_filters: [['n', '>', 3]],
        }),
      ),
    ).toEqual({ keys: ['country', 'event', 'n', 'plan'], sums: ['v'] });
    expect(rollupUses(plan({ split: 'plan' }))).toEqual({ keys: ['plan'], sums: [] });
    // One value, or one per split value, over the whole window: any granularity, any zone.
    expect(rollupUses(plan({ split: 'plan', graph_type: 'Table' }))).toEqual({
      keys: ['plan'],
      sums: [],
    });
    expect(
      rollupUses(
        plan({
          graph_type: 'Single Value',
          aggregation: 'Sum',
          metric: 'v',
          granularity: 'Minute',
          filters: [['country', '≠', 'fr']],
        }),
      ),
    ).toEqual({ keys: ['country'], sums: ['v'] });
    for (const graph_type of ['Bar Chart', 'Pie Chart']) {
      expect(
        rollupUses(plan({ graph_type, split: 'plan', aggregation: 'Avg', metric: 'v' })),
      ).toEqual({ keys: ['plan'], sums: ['v'] });
    }
    for (const unfit of [
      { split: 'plan', granularity: 'Minute', start: now - 3 * HOUR },
      { split: 'plan', start: now - 7 * DAY },
      { split: 'plan', aggregation: 'P90', metric: 'v' },
      { split: 'plan', graph_type: 'Table', start: now - 7 * DAY },
      { graph_type: 'Single Value', aggregation: 'P90', metric: 'v' },
      { graph_type: 'Samples', filters: [['plan', '=', 'pro']] },
      { split: 'plan', filters: [['event', 'includes', 'x']] },
      { split: 'device.os' },
      { split: 'pl an' },
    ]) {
      expect(rollupUses(plan(unfit))).toBeUndefined();
    }
  });

  test('the usage counts keep what is used often within their bound, and pick at most the maximum', () => {
    const usage = new RollupUsage();
    for (let i = 0; i < 5 * MAX_REMEMBERED_NAMES; i++) {
      usage.observe({ keys: [`once${i}`], sums: [] });
      if (i % 50 === 0) usage.observe({ keys: ['often'], sums: ['v'] });
      expect(usage.size).toBeLessThanOrEqual(MAX_REMEMBERED_NAMES);
    }
    expect(usage.size).toBe(MAX_REMEMBERED_NAMES);
    expect(usage.queries('key', 'often')).toBe(Math.ceil((5 * MAX_REMEMBERED_NAMES) / 50));
    expect(usage.queries('sum', 'v')).toBe(Math.ceil((5 * MAX_REMEMBERED_NAMES) / 50));
    expect(usage.queries('key', 'once0')).toBe(0);
    const spec = { keys: [] as string[], sums: [] as string[], auto: true };
    const busy = new RollupUsage();
    for (let q = 0; q < AUTO_MIN_QUERIES - 1; q++) {
      busy.observe({ keys: ['a', 'b', 'c', 'd', 'e'], sums: ['v'] });
    }
    expect(busy.due(spec, { keys: 0, sums: 0 })).toEqual({ keys: [], sums: [] });
    // a, b, c, d, e: 19, 20, 21, 22, 23 queries.
    busy.observe({ keys: ['e', 'd', 'c', 'b'], sums: [] });
    busy.observe({ keys: ['e', 'd', 'c'], sums: ['v'] });
    busy.observe({ keys: ['e', 'd'], sums: [] });
    busy.observe({ keys: ['e'], sums: [] });
    expect(MAX_AUTO_KEYS).toBe(3);
    expect(busy.due(spec, { keys: 0, sums: 0 })).toEqual({ keys: ['e', 'd', 'c'], sums: ['v'] });
    busy.refuse('key', 'd');
    expect(busy.due({ ...spec, keys: ['e'] }, { keys: 1, sums: 0 })).toEqual({
      keys: ['c', 'b'],
      sums: ['v'],
    });
    expect(busy.due({ ...spec, keys: ['e', 'c'] }, { keys: 2, sums: 0 }).keys).toEqual(['b']);
    expect(busy.due({ ...spec, keys: ['e', 'c', 'b'] }, { keys: 3, sums: 0 }).keys).toEqual([]);
    const declared = Array.from({ length: MAX_ROLLUP_KEYS }, (_, i) => `x${i}`);
    expect(busy.due({ ...spec, keys: declared }, { keys: 0, sums: 0 }).keys).toEqual([]);
  });

  test('an added key that stops past the cap stays stopped through another addition and is gone after a restart', async () => {
    const file = join(tempDir('auto-stop'), 'default.duckdb');
    const setting = { keys: ['event'], sums: [], auto: true };
    const write = (db: WorkspaceDb, from: number, n: number, json: (i: number) => object) =>
      db.write(async (tx) => {
        const records = Array.from({ length: n }, (_, i) => ({
          timestamp: T2024 + (from + i) * 600,
          payload: JSON.stringify(json(i)),
        }));
        await appendRecords(tx, await tx.collection(DEFAULT_COLLECTION), records);
      });
    const specRows = (db: WorkspaceDb) =>
      db.read(async (conn) => {
        const r = await conn.runAndReadAll(
          'SELECT role, name, dropped, auto FROM _engine.rollup_spec ORDER BY role, position',
        );
        return r.getRowsJS();
      });
    let db = await WorkspaceDb.open(file, { rollups: setting });
    await write(db, 0, 30, (i) => ({ event: `e${i % 2}`, plan: `p${i % 3}`, country: 'fr' }));
    expect(await db.keyValueCount('plan')).toBe(3);
    expect(await db.extendRollups({ keys: ['plan'], sums: [] })).toEqual({
      keys: ['event', 'plan'],
      sums: [],
      auto: true,
    });
    await write(db, 100, MAX_KEY_VALUES + 6, (i) => ({
      event: 'e1',
      plan: `q${i}`,
      country: 'de',
    }));
    expect(await db.keyValueCount('plan')).toBe(3 + MAX_KEY_VALUES + 6);
    expect(await disagreements(db)).toEqual([]);
    await db.close();
    // The merge at open stops it; another addition keeps its column empty.
    db = await WorkspaceDb.open(file, { rollups: setting });
    await db.extendRollups({ keys: ['country'], sums: [] });
    expect(await specRows(db)).toEqual([
      ['key', 'event', false, false],
      ['key', 'plan', true, true],
      ['key', 'country', false, true],
    ]);
    const columns = await db.read(async (conn) => {
      const r = await conn.runAndReadAll(
        `SELECT count(k1), count(DISTINCT k2), sum(n) FROM ${ROLLUP_TABLE}`,
      );
      return r.getRowsJS()[0]?.map(Number);
    });
    expect(columns).toEqual([0, 2, 30 + MAX_KEY_VALUES + 6]);
    expect(await disagreements(db)).toEqual([]);
    await db.close();
    db = await WorkspaceDb.open(file, { rollups: setting });
    expect(await specRows(db)).toEqual([
      ['key', 'event', false, false],
      ['key', 'country', false, true],
    ]);
    expect(await disagreements(db)).toEqual([]);
    await db.close();
  });

  test('keys and a metric enough queries use are added and backfilled, answers equal with rollups off; a key past the cap is not', async () => {
    // A bulk log a day (one timestamp each, in odd places of their spans).
    const days = Array.from({ length: 40 }, (_, d) => ({
      timestamp: T2024 + d * DAY + (d % 24) * HOUR + (d % 5) * 61,
      jsons: Array.from({ length: 8 }, (_, j) => {
        const i = d * 8 + j;
        return { plan: `p${i % 3}`, user: `u${i % 100}`, ...(i % 4 ? { v: (i % 7) / 10 } : {}) };
      }),
    }));
    const logs: string[] = [];
    const open = (dataDir: string, rollups: Parameters<typeof createEngine>[0]['rollups']) =>
      createEngine({
        rollupReads: 'always',
        dataDir,
        workspaces: { default: 'k' },
        now: () => now,
        bodyWorkers: 0,
        logError: (message) => logs.push(message),
        ...(rollups === undefined ? {} : { rollups }),
      });
    const autoDir = tempDir('auto');
    let auto = await open(autoDir, { '*': { keys: ['event'], auto: true } });
    const off = await open(tempDir('auto-off'), undefined);
    for (const engine of [auto, off]) {
      for (const day of days) {
        expect((await engine.bulkLog({ api_key: 'k', ...day })).status).toBe(200);
      }
    }
    const shapes = [
      { graph_type: 'Multi Line', split: 'plan' },
      { filters: [['plan', '=', 'p1']] },
      { graph_type: 'Multi Line', split: 'plan', aggregation: 'Sum', metric: 'v' },
      { aggregation: 'Avg', metric: 'v', filters: [['plan', '≠', 'p2']] },
      { graph_type: 'Multi Line', split: 'user' },
    ];
    const ask = (engine: typeof auto, shape: Record<string, unknown>) =>
      engine.query({ api_key: 'k', ...daily, ...shape });
    const expected = await Promise.all(shapes.map((shape) => ask(off, shape)));
    for (const answer of expected) expect(answer.status).toBe(200);
    const added = () => logs.filter((line) => line.includes('rollups now also kept by'));
    // Each round's queries at once, beside the additions they start.
    for (let round = 0; round < AUTO_MIN_QUERIES; round++) {
      expect(await Promise.all(shapes.map((shape) => ask(auto, shape)))).toEqual(expected);
    }
    // The additions run beside the queries: wait for both (the key, then the metric's sums).
    for (let wait = 0; wait < 200 && !added().some((l) => l.includes('sums of v')); wait++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(added().join('\n')).toMatch(/key plan/);
    expect(added().join('\n')).toMatch(/sums of v/);
    expect(added().join('\n')).not.toMatch(/user/);
    for (const [i, shape] of shapes.entries()) expect(await ask(auto, shape)).toEqual(expected[i]);
    // Events after the addition go into the new columns too.
    const late = {
      timestamp: T2024 + 20 * DAY + 7,
      jsons: [{ plan: 'p1', v: 0.5 }, { plan: 'p4' }],
    };
    for (const engine of [auto, off]) {
      expect((await engine.bulkLog({ api_key: 'k', ...late })).status).toBe(200);
    }
    const after = await Promise.all(shapes.map((shape) => ask(off, shape)));
    expect(after).not.toEqual(expected);
    for (const [i, shape] of shapes.entries()) expect(await ask(auto, shape)).toEqual(after[i]);
    expected.splice(0, expected.length, ...after);
    await auto.close();
    const file = join(autoDir, 'default.duckdb');
    const specRows = async (db: WorkspaceDb) =>
      db.read(async (conn) => {
        const r = await conn.runAndReadAll(
          `SELECT role, name, dropped, auto FROM _engine.rollup_spec ORDER BY role, position`,
        );
        return r.getRowsJS();
      });
    let db = await WorkspaceDb.open(file);
    expect(await specRows(db)).toEqual([
      ['key', 'event', false, false],
      ['key', 'plan', false, true],
      ['sum', 'v', false, true],
    ]);
    // Backfilled: per span and plan, the rollups hold the events' counts.
    const events_ = db.catalog.get(DEFAULT_COLLECTION)?.view;
    const mismatches = await db.read(async (conn) => {
      const r = await conn.runAndReadAll(
        `WITH kept AS (SELECT span, k1 AS plan, sum(n) AS n FROM ${ROLLUP_TABLE} GROUP BY ALL),
              counted AS (SELECT floor("timestamp" / 900)::BIGINT AS span,
                                 json_extract_string("json", '$.plan') AS plan, count(*) AS n
                          FROM ${events_} GROUP BY ALL)
         SELECT * FROM kept FULL OUTER JOIN counted USING (span, plan)
         WHERE kept.n IS DISTINCT FROM counted.n`,
      );
      return r.getRows();
    });
    expect(mismatches).toEqual([]);
    // Tampering (never done but here) shows that a restart with auto keeps and reads the key.
    const id = db.catalog.get(DEFAULT_COLLECTION)?.id;
    await db.write(async (tx) => {
      await tx.conn.run(
        `INSERT INTO ${ROLLUP_TABLE} (collection_id, span, k0, k1, n) VALUES (${id}, ${(T2024 + DAY) / 900 + 3}, NULL, 'p1', 1000)`,
      );
    });
    await db.close();
    auto = await open(autoDir, { '*': { keys: ['event'], auto: true } });
    const tampered = await ask(auto, shapes[1] as Record<string, unknown>);
    const combined = (answer: unknown) =>
      (answer as { body: { metadata: { combined: number } } }).body.metadata.combined;
    expect(combined(tampered)).toBe(combined(expected[1]) + 1000);
    await auto.close();
    // Declaring the keys again without auto drops what the engine added.
    auto = await open(autoDir, { '*': { keys: ['event'] } });
    for (const [i, shape] of shapes.entries()) expect(await ask(auto, shape)).toEqual(expected[i]);
    await auto.close();
    db = await WorkspaceDb.open(file);
    expect(await specRows(db)).toEqual([['key', 'event', false, false]]);
    await db.close();
    await off.close();
  }, 60_000);
});
