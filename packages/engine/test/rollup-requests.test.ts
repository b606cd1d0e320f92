import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_COLLECTION } from '@analytics-chart/protocol';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MIN_ROLLUP_SPANS } from '../src/collection/plan/rollup-eligibility.ts';
import { createEngine, type Engine } from '../src/index.ts';
import { clusterCollection } from '../src/storage/duckdb/cluster-rows.ts';
import { WorkspaceDb } from '../src/storage/duckdb/workspace-db.ts';
import { driverOptions, ON_CLICKHOUSE } from './helpers/driver.ts';

/**
 * Generated valid requests answered by two engines over the same events, on the project's
 * driver, one keeping rollups (`storage/duckdb/rollups.ts`, `storage/clickhouse/clickhouse-rollups.ts`)
 * by the keys `event`, `plan` and `country` with the sums of `ms`, and one
 * not: every answer must be the same JSON text, byte for byte, after the first ingest, after
 * late events land in old spans, and after compaction and a restart. The requests lean towards
 * what rollups answer (Count, Sum and Avg, unfiltered or filtered by `=`, `≠`, `<`, `>` on the
 * rolled-up keys, split by them, lines per Hour to Month in zones whose offsets are whole
 * quarter hours, Single Value with and without a compare window, Table, Bar Chart and Pie
 * Chart) and mix in what they must not (`includes`, filters on other keys, percentiles, Minute,
 * Nepal's and India's odd-half-hour offsets, Liberia's 1971 offset). `plan` takes every kind of
 * value (strings, numbers, numeric text, booleans, null, missing) and `ms` values off the exact
 * sums' grid, so that the keys' typing and the sums' exactness are compared too; `country` has
 * more values than a Bar Chart (50) or Pie Chart (10) shows, names that differ in case, digits
 * and accents, ties, a value whose events have no `ms` (an Avg of null) and events without it.
 */

const KEY = 'rollup-requests-key';
const NOW = Date.UTC(2024, 5, 1) / 1000;
const START_2024 = Date.UTC(2024, 0, 1) / 1000;
const START_1971 = Date.UTC(1971, 9, 1) / 1000;
const DAY = 86_400;
const SPAN = 900;

/** A small deterministic generator (mulberry32), so a failure names a request that repeats. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const EVENT_NAMES = ['view', 'click', 'signup', 'buy'];
const ZONES = [
  'UTC',
  'America/Los_Angeles',
  'Europe/London',
  'Asia/Kathmandu',
  'Asia/Kolkata',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'Africa/Monrovia',
];
const GRAPH_TYPES = [
  'Single Line',
  'Single Line',
  'Single Line',
  'Multi Line',
  'Stacked Line',
  'Cumulative Line',
  'Ratio Line',
  'Compare Line',
  'Single Value',
  'Single Value',
  'Table',
  'Table',
  'Bar Chart',
  'Pie Chart',
];
/** Graph types whose answer is one value, or one per split value, over the whole window. */
const WHOLE_WINDOW = ['Single Value', 'Table', 'Bar Chart', 'Pie Chart'];
const CATEGORIES = ['Table', 'Bar Chart', 'Pie Chart'];

/** 55 countries (past a Bar Chart's 50), whose names differ in case, digits and accents. */
const COUNTRIES = Array.from(
  { length: 55 },
  (_, j) => `${['us', 'US', 'fr', 'é', 'Z', '10', '9'][j % 7]}${j < 7 ? '' : Math.floor(j / 7)}`,
);

/**
 * An event's `country`, from its index and day alone (the generator's draws stay as they were):
 * missing for one in ten, `nowhere` for those without `ms`.
 */
function country(i: number, timestamp: number): { country?: string } {
  if (i % 10 === 9) return {};
  if (i % 13 === 5) return { country: 'nowhere' };
  return { country: COUNTRIES[(i * 7 + Math.floor(timestamp / DAY)) % COUNTRIES.length] };
}
const GRANULARITIES = ['Auto', 'Minute', 'Hour', 'Hour', 'Day', 'Day', 'Week', 'Month'];

interface Event {
  timestamp: number;
  json: Record<string, unknown>;
}

/** Events over the first five months of 2024 and the last three of 1971, many on span edges. */
function events(seed: number, count: number, from: number, to: number): Event[] {
  const next = random(seed);
  return Array.from({ length: count }, (_, i) => {
    let timestamp = from + Math.floor(next() * (to - from));
    // A third sit on a span's first or last second, or next to it.
    if (i % 3 === 0) timestamp = Math.floor(timestamp / SPAN) * SPAN + (i % 9 === 0 ? -1 : i % 2);
    return {
      timestamp,
      json: {
        event: EVENT_NAMES[Math.floor(next() * EVENT_NAMES.length)],
        ...plan(next),
        ...(i % 13 === 5 ? {} : { ms: metric(next, i, from < START_2024) }),
        other: Math.floor(next() * 3),
        ...country(i, timestamp),
      },
    };
  });
}

function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)] as T;
}

/** `plan` as strings mostly, and as every other kind of value a filter or split must type. */
const PLANS: ReadonlyArray<unknown> = ['pro', 'free', 'free', 3, '3', '3.0', true, null, 1e21, 'x'];

function plan(next: () => number): { plan?: unknown } {
  const r = next();
  if (r < 0.6) return { plan: r < 0.2 ? 'pro' : 'free' };
  if (r < 0.65) return {};
  return { plan: pick(next, PLANS) };
}

/**
 * `ms` mostly whole, with fractions, numeric text and values off the exact sums' grid; values
 * past the grid (`huge`) only in 1971, as one of them outweighs every limb of a sum beside it.
 */
function metric(next: () => number, i: number, huge: boolean): unknown {
  const whole = Math.floor(next() * 5000);
  if (i % 7 === 0) return whole / 8;
  if (i % 11 === 0) return whole / 10;
  if (i % 17 === 0) return String(whole);
  if (i % 19 === 0) return whole * 1e-30;
  if (i % 23 === 0 && huge) return whole * 1e29;
  if (i % 29 === 0) return 'slow';
  return whole;
}

/** Filters on the rolled-up keys as rollups answer them, and a few they cannot. */
const FILTERS: ReadonlyArray<unknown> = [
  [['plan', '=', 'pro']],
  [['plan', '≠', 'pro']],
  [['plan', '=', 3]],
  [['plan', '=', '3']],
  [['plan', '≠', 3]],
  [['plan', '=', true]],
  [['plan', '=', 'true']],
  [['plan', '>', 2]],
  [['plan', '<', '5']],
  [['plan', '=', 1e21]],
  [
    ['event', '=', 'buy'],
    ['plan', '≠', 'free'],
  ],
  [
    [['event', '=', 'buy']],
    [
      ['event', '=', 'view'],
      ['plan', '=', 'pro'],
    ],
  ],
  [[['plan', '=', 'pro']], [['plan', '=', 'free']], [['plan', '=', 3]]],
  [['event', 'includes', 'u']],
  [['other', '=', 1]],
];

/** One request: a window in 2024 (or late 1971 for Liberia), aligned or not, in the given mix. */
function request(next: () => number): Record<string, unknown> {
  const zone = pick(next, ZONES);
  const granularity = pick(next, GRANULARITIES);
  const graphType = pick(next, GRAPH_TYPES);
  const base = zone === 'Africa/Monrovia' && next() < 0.5 ? START_1971 : START_2024;
  const maxDays = granularity === 'Minute' ? 2 : granularity === 'Hour' ? 40 : 120;
  let start = base + Math.floor(next() * 140 * DAY);
  let length = Math.max(1, Math.floor(next() * maxDays * DAY));
  // Half the windows start and end on whole hours (as dashboards ask); a few on whole days UTC.
  if (next() < 0.5) {
    start = Math.floor(start / 3600) * 3600 - 1;
    length = Math.max(3600, Math.floor(length / 3600) * 3600) + 1;
  } else if (next() < 0.2) {
    start = Math.floor(start / DAY) * DAY - 1;
    length = Math.max(DAY, Math.floor(length / DAY) * DAY) + 1;
  }
  const count = next() < 0.55;
  const body: Record<string, unknown> = {
    api_key: KEY,
    graph_type: graphType,
    start,
    end: Math.min(start + length, NOW),
    IANA_time_zone: zone,
    granularity,
    aggregation: count ? 'Count' : pick(next, ['Sum', 'Sum', 'Avg', 'Avg', 'P90']),
    metric: 'ms',
  };
  if (next() < 0.4) body.filters = pick(next, FILTERS);
  if (graphType === 'Multi Line' || graphType === 'Stacked Line') {
    body.split = next() < 0.5 ? 'event' : next() < 0.8 ? 'plan' : 'other';
  }
  if (CATEGORIES.includes(graphType)) {
    body.split = pick(next, ['country', 'country', 'event', 'plan', 'other']);
  }
  if (graphType === 'Single Value' && next() < 0.4) {
    body.compare = pick(next, ['1 week ago', '4 weeks', '1 month ago']);
  }
  if (graphType === 'Ratio Line') {
    body.numerator_filters = [['event', '=', 'buy']];
    body.denominator_filters = [['event', '=', 'view']];
  }
  if (graphType === 'Compare Line') {
    body.compare_filters = next() < 0.5 ? [] : [['plan', '=', 'pro']];
  }
  return body;
}

/**
 * What rollups could answer: over rolled-up keys, long enough, one line or split lines with
 * buckets of at least an hour, or one value (or one per split value) over the whole window.
 */
function rollupShaped(body: Record<string, unknown>): boolean {
  const [start, end] = [Number(body.start), Number(body.end)];
  const filters = JSON.stringify(body.filters ?? []);
  const graphType = String(body.graph_type);
  return (
    ['Count', 'Sum', 'Avg'].includes(String(body.aggregation)) &&
    Math.floor((end + 1) / SPAN) - Math.ceil(start / SPAN) >= MIN_ROLLUP_SPANS &&
    !filters.includes('includes') &&
    !filters.includes('other') &&
    body.split !== 'other' &&
    ((body.granularity !== 'Minute' &&
      ['Single Line', 'Compare Line', 'Multi Line', 'Stacked Line'].includes(graphType)) ||
      WHOLE_WINDOW.includes(graphType))
  );
}

const dirs = {
  on: mkdtempSync(join(tmpdir(), 'rollups-on-')),
  off: mkdtempSync(join(tmpdir(), 'rollups-off-')),
};
/** On ClickHouse, each engine's databases, the same across a restart. */
const places = { on: driverOptions(), off: driverOptions() };
let on: Engine;
let off: Engine;

// Engines sent objects, never request bytes: no body workers.
function open(rollups: boolean): Promise<Engine> {
  return createEngine({
    dataDir: rollups ? dirs.on : dirs.off,
    ...(ON_CLICKHOUSE ? places[rollups ? 'on' : 'off'] : {}),
    workspaces: { default: KEY },
    now: () => NOW,
    rollups: rollups ? { default: { keys: ['event', 'plan', 'country'], sums: ['ms'] } } : false,
    // About one rollup row per event here, which the planner would leave for the events.
    rollupReads: 'always',
    logError: () => undefined,
    bodyWorkers: 0,
  });
}

/** Sends events to both engines, in batches that share the group commit. */
async function log(list: Event[]): Promise<void> {
  for (const engine of [on, off]) {
    for (let i = 0; i < list.length; i += 250) {
      const answers = await Promise.all(
        list
          .slice(i, i + 250)
          .map((e) => engine.log({ api_key: KEY, timestamp: e.timestamp, json: e.json })),
      );
      for (const a of answers) expect(a.status).toBe(200);
    }
  }
}

/**
 * How many times the default number of requests each step generates: a developer's longer run
 * (`ROLLUP_REQUESTS_SCALE=4`); the default keeps the suite's time small.
 */
const SCALE = Math.max(1, Number(process.env.ROLLUP_REQUESTS_SCALE ?? 1) || 1);

/** How many requests of a run were rollup-shaped: all, those over the whole window, and those cut at their cap. */
interface Shaped {
  all: number;
  whole: number;
  capped: number;
}

/** The rows a Bar Chart and a Pie Chart show at most. */
const CAPS: Record<string, number> = { 'Bar Chart': 50, 'Pie Chart': 10 };

/** Asks both engines `n` generated requests and expects the same text; counts the rollup-shaped. */
async function compare(seed: number, n: number): Promise<Shaped> {
  const next = random(seed);
  const shaped = { all: 0, whole: 0, capped: 0 };
  for (let i = 0; i < n * SCALE; i++) {
    const body = request(next);
    const graphType = String(body.graph_type);
    const rollup = rollupShaped(body);
    if (rollup) {
      shaped.all++;
      if (WHOLE_WINDOW.includes(graphType)) shaped.whole++;
    }
    // On ClickHouse (tens of milliseconds a statement) every rollup-shaped request is compared,
    // and one in four of the rest, which only the plan tells apart from the raw read.
    else if (ON_CLICKHOUSE && next() >= 0.25) continue;
    const [a, b] = await Promise.all([on.query(body), off.query(body)]);
    const text = (r: typeof a) => `${r.status} ${r.json ?? JSON.stringify(r.body)}`;
    const head = (r: typeof a) => text(r).slice(0, 1500);
    if (text(a) !== text(b)) {
      expect.fail(
        `request ${i} of seed ${seed}: ${JSON.stringify(body)}\nrollups on:  ${head(a)}\nrollups off: ${head(b)}`,
      );
    }
    const rows = (a.body as { result?: unknown[] }).result?.length;
    if (rollup && rows !== undefined && rows === CAPS[graphType]) shaped.capped++;
  }
  return shaped;
}

beforeAll(async () => {
  [on, off] = await Promise.all([open(true), open(false)]);
  await log([
    ...events(1, 2500, START_2024, NOW),
    ...events(2, 500, START_1971, START_1971 + 95 * DAY),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([on?.close(), off?.close()]);
  rmSync(dirs.on, { recursive: true, force: true });
  rmSync(dirs.off, { recursive: true, force: true });
});

describe('rollups on and off answer the same text', () => {
  test('600 generated requests over the ingested events', { timeout: 300_000 }, async () => {
    const shaped = await compare(11, 600);
    // Enough of them are what rollups answer that the comparison means something, over the
    // whole window too, some cut at a Bar Chart's or Pie Chart's cap.
    expect(shaped.all).toBeGreaterThan(60);
    expect(shaped.whole).toBeGreaterThan(30);
    expect(shaped.capped).toBeGreaterThan(3);
  });

  test('late events in old spans, then 250 more requests', { timeout: 300_000 }, async () => {
    await log(events(3, 600, START_2024, START_2024 + 30 * DAY));
    await compare(12, 250);
  });

  test('compaction (DuckDB) and a restart, then 250 more requests', {
    timeout: 300_000,
  }, async () => {
    await on.close();
    if (!ON_CLICKHOUSE) {
      const db = await WorkspaceDb.open(join(dirs.on, 'default.duckdb'), { rollups: true });
      try {
        await clusterCollection(db, DEFAULT_COLLECTION, { field: 'event' });
      } finally {
        await db.close();
      }
    }
    on = await open(true);
    await log(events(4, 300, START_2024, NOW));
    await compare(13, 250);
  });
});
