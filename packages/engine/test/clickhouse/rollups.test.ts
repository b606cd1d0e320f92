import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_COLLECTION } from '@analytics-chart/protocol';
import { createClient } from '@clickhouse/client-web';
import { afterAll, beforeAll, describe, expect, inject, test, vi } from 'vitest';
import { CLICKHOUSE_MIN_ROLLUP_EVENTS } from '../../src/collection/plan/rollup-eligibility.ts';
import { openClickHouseDriver } from '../../src/drivers/clickhouse/clickhouse-driver.ts';
import { loadIntoClickHouse } from '../../src/drivers/load-into-clickhouse.ts';
import { createEngine, type Engine, type EngineOptions } from '../../src/index.ts';
import { ClickHouseRollups } from '../../src/storage/clickhouse/clickhouse-rollups.ts';
import { AUTO_MIN_QUERIES, MAX_KEY_VALUES } from '../../src/storage/rollup-spec.ts';
import { clickHouseProxy } from '../helpers/clickhouse-proxy.ts';

/**
 * Rollups on ClickHouse (`storage/clickhouse/clickhouse-rollups.ts`): a materialized view keeps
 * them, so events that arrive late land in their old spans; they survive a restart and are
 * built from the events when the declaration changes or a build was cut short, dropped by an
 * engine without them, and kept up by `engine load`'s inserts, a build counting once what a
 * replica inserts meanwhile; and the planner really reads them (a row
 * written into the rollup table by hand changes exactly the answers that read it), except for a
 * key past the bound of distinct values, whose queries read the events. Every answer is compared
 * byte for byte with an engine without rollups over the same events, and the day counts with
 * counts made here from the events themselves. Automatic keys add a wider table while events
 * arrive, once even when two engines decide at once. (`rollup-requests.test.ts` compares
 * generated requests on both drivers.)
 */

const KEY = 'rollups-key';
const NOW = Date.UTC(2024, 5, 1) / 1000;
const START = Date.UTC(2024, 0, 1) / 1000;
const DAY = 86_400;
const url = inject('clickhouseUrl');
const password = inject('clickhousePassword');
const direct = createClient({ url, password });

/** Rolled up by `event`, `plan` and `u` (which has more distinct values than the bound), with the sums of `ms`. */
const SPEC = { keys: ['event', 'plan', 'u'], sums: ['ms'] };
const U_VALUES = MAX_KEY_VALUES + 36;

interface Event {
  timestamp: number;
  json: Record<string, unknown>;
}

/** `count` events spread over [from, to), deterministic in `seed`. */
function events(seed: number, count: number, from: number, to: number): Event[] {
  return Array.from({ length: count }, (_, i) => {
    const x = (i * 7919 + seed * 104_729) % 1_000_003;
    return {
      timestamp: from + Math.floor(((x / 1_000_003) * (to - from)) / 1) - (i % 5 === 0 ? 1 : 0),
      json: {
        event: ['view', 'click', 'buy'][i % 3],
        ...(i % 4 === 3 ? {} : { plan: i % 4 === 0 ? 'pro' : i % 4 === 1 ? 3 : 'free' }),
        u: i % U_VALUES,
        ms: i % 6 === 0 ? (i % 1000) / 10 : i % 1000,
      },
    };
  });
}

/** Requests that read the rollups (whole spans of at least four weeks) and two on `u`, which must not. */
const REQUESTS: Array<Record<string, unknown>> = [
  { graph_type: 'Single Line', granularity: 'Day', IANA_time_zone: 'UTC' },
  {
    graph_type: 'Single Line',
    granularity: 'Day',
    IANA_time_zone: 'America/Los_Angeles',
    aggregation: 'Sum',
    metric: 'ms',
    filters: [['plan', '=', 'pro']],
  },
  {
    graph_type: 'Single Line',
    granularity: 'Week',
    IANA_time_zone: 'Europe/London',
    aggregation: 'Avg',
    metric: 'ms',
    filters: [['plan', '≠', 3]],
  },
  { graph_type: 'Multi Line', granularity: 'Hour', IANA_time_zone: 'UTC', split: 'event' },
  {
    graph_type: 'Stacked Line',
    granularity: 'Month',
    IANA_time_zone: 'Asia/Tokyo',
    split: 'plan',
    aggregation: 'Sum',
    metric: 'ms',
  },
  {
    graph_type: 'Compare Line',
    granularity: 'Day',
    IANA_time_zone: 'UTC',
    compare_filters: [['event', '=', 'buy']],
  },
  {
    graph_type: 'Ratio Line',
    granularity: 'Day',
    IANA_time_zone: 'UTC',
    numerator_filters: [['event', '=', 'buy']],
    denominator_filters: [['plan', '>', 2]],
  },
  { graph_type: 'Multi Line', granularity: 'Day', IANA_time_zone: 'UTC', split: 'u' },
  {
    graph_type: 'Single Line',
    granularity: 'Day',
    IANA_time_zone: 'UTC',
    filters: [['u', '=', 7]],
  },
];

/**
 * Single Value, Table, Bar Chart and Pie Chart requests (one value, or one per split value, over
 * the whole window), read only where the planner's reading of rollups is checked: three that
 * read them and one on `u`, which must not.
 */
const WHOLE_WINDOW_REQUESTS: Array<Record<string, unknown>> = [
  { graph_type: 'Single Value', IANA_time_zone: 'UTC', compare: '1 week ago' },
  {
    graph_type: 'Table',
    IANA_time_zone: 'UTC',
    split: 'plan',
    aggregation: 'Sum',
    metric: 'ms',
  },
  {
    graph_type: 'Pie Chart',
    IANA_time_zone: 'Asia/Kolkata',
    split: 'event',
    aggregation: 'Avg',
    metric: 'ms',
    filters: [['plan', '=', 'pro']],
  },
  { graph_type: 'Bar Chart', IANA_time_zone: 'UTC', split: 'u' },
];

/** The window every request reads: January to April 2024 (four months of whole spans), and an odd second before. */
const WINDOW = { start: START - 1, end: Date.UTC(2024, 4, 1) / 1000 - 1 };

const places = {
  on: `r${randomBytes(4).toString('hex')}_`,
  off: `r${randomBytes(4).toString('hex')}_`,
};
let on: Engine;
let off: Engine;
const logged: Event[] = [];

/** An engine on `place`'s databases; `'unset'` leaves the rollups option out. */
function open(
  place: keyof typeof places,
  rollups: EngineOptions['rollups'] | 'unset' = place === 'on' ? { default: SPEC } : false,
): Promise<Engine> {
  return createEngine({
    rollupReads: 'always',
    dataDir: '/nonexistent',
    clickhouse: { url, password, databasePrefix: places[place] },
    workspaces: { default: KEY },
    now: () => NOW,
    ...(rollups === 'unset' ? {} : { rollups }),
    logError: () => undefined,
  });
}

/** Sends events to both engines, concurrently, so that the group commit makes few inserts. */
async function log(list: Event[]): Promise<void> {
  logged.push(...list);
  for (const engine of [on, off]) {
    const answers = await Promise.all(
      list.map((e) => engine.log({ api_key: KEY, timestamp: e.timestamp, json: e.json })),
    );
    for (const a of answers) expect(a.status).toBe(200);
  }
}

/** The answer's text, for a byte-for-byte comparison. */
async function text(engine: Engine, request: Record<string, unknown>): Promise<string> {
  const r = await engine.query({ api_key: KEY, ...WINDOW, ...request });
  return `${r.status} ${r.json ?? JSON.stringify(r.body)}`;
}

/** Each request's answer with rollups and without: the same text; the answers with them. */
async function compareAll(): Promise<string[]> {
  const answers: string[] = [];
  for (const request of REQUESTS) {
    const [a, b] = await Promise.all([text(on, request), text(off, request)]);
    expect(a, JSON.stringify(request)).toBe(b);
    answers.push(a);
  }
  return answers;
}

/** The first request's day counts (UTC) as counted here from the events sent. */
function dayCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of logged) {
    if (e.timestamp < WINDOW.start || e.timestamp > WINDOW.end) continue;
    const day = new Date(Math.floor(e.timestamp / DAY) * DAY * 1000).toISOString().slice(0, 10);
    counts.set(day, (counts.get(day) ?? 0) + 1);
  }
  return counts;
}

/** The first request's answer as day → count. */
function answeredDays(answer: string): Map<string, number> {
  const body = JSON.parse(answer.slice(answer.indexOf(' ') + 1)) as {
    result: Array<Record<string, string | number>>;
  };
  const days = new Map<string, number>();
  for (const row of body.result) {
    const value = Number(Object.entries(row).find(([k]) => k !== 'timestamp')?.[1] ?? 0);
    if (value) days.set(String(row.timestamp).slice(0, 10), value);
  }
  return days;
}

async function rollupTables(prefix: string): Promise<string[]> {
  const result = await direct.query({
    query: `SELECT name FROM system.tables WHERE database = {db:String} AND name LIKE '_engine_rollup%' ORDER BY name`,
    query_params: { db: `${prefix}default` },
    format: 'JSONEachRow',
  });
  return (await result.json<{ name: string }>()).map((r) => r.name);
}

beforeAll(async () => {
  [on, off] = await Promise.all([open('on'), open('off')]);
  await log(events(1, 1500, START - 10 * DAY, NOW));
}, 120_000);

afterAll(async () => {
  await Promise.all([on?.close(), off?.close()]);
  for (const prefix of Object.values(places)) {
    await direct.command({ query: `DROP DATABASE IF EXISTS \`${prefix}default\`` });
  }
  await direct.close();
});

describe('rollups on ClickHouse', () => {
  test('answer as the events do, and the day counts are the events counted here', async () => {
    const [days] = await compareAll();
    expect(answeredDays(days as string)).toEqual(dayCounts());
    expect(await rollupTables(places.on)).toEqual(['_engine_rollup_15m', '_engine_rollup_15m_mv']);
    expect(await rollupTables(places.off)).toEqual([]);
  });

  test('late events land in their old spans through the view', async () => {
    const before = answeredDays((await compareAll())[0] as string);
    // Events of January, sent after the spans they fall in were rolled up.
    await log(events(2, 300, START, START + 31 * DAY));
    const [days] = await compareAll();
    const after = answeredDays(days as string);
    expect(after).toEqual(dayCounts());
    expect([...after.values()].reduce((a, b) => a + b)).toBe(
      [...before.values()].reduce((a, b) => a + b) + 300,
    );
  });

  test('a restart keeps them; another declaration builds them anew from the events', async () => {
    await on.close();
    on = await open('on');
    await compareAll();
    await on.close();
    // Without `u` and with `ms` as a key too: the table is built again, in one INSERT … SELECT.
    on = await open('on', { default: { keys: ['event', 'plan', 'ms'], sums: ['ms'] } });
    await compareAll();
    await log(events(3, 100, START, NOW));
    await compareAll();
    await on.close();
    // A build cut short leaves a table without the comment that names its spec, and a row that
    // would change every Count: the next start builds it again.
    const table = `\`${places.on}default\`._engine_rollup_15m`;
    await direct.command({ query: `ALTER TABLE ${table} MODIFY COMMENT ''` });
    await direct.command({
      query: `INSERT INTO ${table} (collection, span, n) VALUES ({c:String}, {span:Int64}, 5)`,
      query_params: { c: DEFAULT_COLLECTION, span: (START + 40 * DAY) / 900 },
    });
    on = await open('on');
    await compareAll();
  });

  test('replicas opening at once with a new declaration build them once, and every one reads them', async () => {
    await on.close();
    const declared = { default: { keys: ['event', 'plan'], sums: ['ms'] } };
    const replicas = await Promise.all([1, 2, 3].map(() => open('on', declared)));
    on = replicas[0] as Engine;
    const answers = await compareAll();
    for (const replica of replicas.slice(1)) {
      for (const [i, request] of REQUESTS.entries()) {
        expect(await text(replica, request)).toBe(answers[i]);
      }
    }
    // No build lock left behind.
    expect(await rollupTables(places.on)).toEqual(['_engine_rollup_15m', '_engine_rollup_15m_mv']);
    await Promise.all(replicas.map((r) => r.close()));
    on = await open('on');
  });

  test('another declaration built while a replica inserts counts each event once', async () => {
    await on.close();
    // A replica that keeps what the workspace has goes on writing while another engine rebuilds.
    on = await open('on', 'unset');
    const writer = on;
    let building = true;
    const built = open('on', { default: { keys: ['plan', 'event'], sums: ['ms'] } }).finally(() => {
      building = false;
    });
    let seed = 20;
    while (building) await log(events(seed++, 5, START, NOW));
    on = await built;
    await writer.close();
    // Rounds ran before the build's view, between it and its boundary, and after.
    expect(seed).toBeGreaterThan(22);
    const [days] = await compareAll();
    expect(answeredDays(days as string)).toEqual(dayCounts());
    await on.close();
    on = await open('on');
  });

  test('a build that outlasts the time a query is given completes', async () => {
    await on.close();
    // The backfill's statement is held past the client's time for a query before it runs.
    const TIMEOUT_MS = 3000;
    let held = 0;
    const proxy = await clickHouseProxy(url, {
      before: async (statement) => {
        if (!statement.startsWith(`INSERT INTO \`${places.on}default\`.\`_engine_rollup_15m\``))
          return false;
        held++;
        await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS + 500));
        return false;
      },
    });
    try {
      const driver = await openClickHouseDriver(
        { url: proxy.url, password, databasePrefix: places.on },
        {
          workspaces: ['default'],
          memoryLimit: '1GB',
          requestTimeoutMs: TIMEOUT_MS,
          rollups: { default: { keys: ['event'], sums: [] } },
        },
      );
      await driver.close();
    } finally {
      proxy.close();
    }
    expect(held).toBe(1);
    const tables = await direct.query({
      query: `SELECT comment FROM system.tables WHERE database = {db:String} AND name = '_engine_rollup_15m'`,
      query_params: { db: `${places.on}default` },
      format: 'JSONEachRow',
    });
    expect(await tables.json()).toEqual([{ comment: '{"keys":["event"],"sums":[]}' }]);
    on = await open('on');
  }, 60_000);

  test('an event table made before `_inserted` gets it at its first build: 0 for its events', async () => {
    await on.close();
    // Rollups off first: their views read the column.
    await (await open('on', false)).close();
    const table = `\`${places.on}default\`._engine_events`;
    await direct.command({ query: `ALTER TABLE ${table} DROP COLUMN _inserted` });
    on = await open('on');
    await compareAll();
    const clock = async () => {
      const result = await direct.query({
        query: `SELECT countIf(_inserted = 0) AS zero, countIf(_inserted > 0) AS clocked,
                  (SELECT default_expression FROM system.columns WHERE database = {db:String}
                     AND table = '_engine_events' AND name = '_inserted') AS d
                FROM ${table}`,
        query_params: { db: `${places.on}default` },
        format: 'JSONEachRow',
      });
      const [row] = await result.json<{ zero: string; clocked: string; d: string }>();
      return { zero: Number(row?.zero), clocked: Number(row?.clocked), d: row?.d };
    };
    expect(await clock()).toEqual({ zero: logged.length, clocked: 0, d: 'now64(3)' });
    await log(events(4, 100, START, NOW));
    expect(await clock()).toEqual({ zero: logged.length - 100, clocked: 100, d: 'now64(3)' });
    await compareAll();
  });

  test('an engine without the option keeps and reads them; one with false drops them', async () => {
    await on.close();
    // Another replica started without the option: the rollups the others keep stay.
    on = await open('on', 'unset');
    expect(await rollupTables(places.on)).not.toEqual([]);
    await compareAll();
    await on.close();
    on = await open('on', false);
    expect(await rollupTables(places.on)).toEqual([]);
    await compareAll();
    await on.close();
    on = await open('on');
  });

  test('a load into the workspace keeps them up: the view sees its inserts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rollups-load-'));
    try {
      const file = join(dir, 'events.ndjson');
      const loaded = events(4, 400, START, NOW);
      writeFileSync(file, `${loaded.map((e) => JSON.stringify(e)).join('\n')}\n`);
      const result = await loadIntoClickHouse(
        file,
        { url, password, databasePrefix: places.on },
        'default',
        DEFAULT_COLLECTION,
        { workers: 0 },
      );
      expect(result).toEqual({ events: 400, badLines: 0 });
      // The engine without rollups takes the same events by its API, in a few group commits.
      const answers = await Promise.all(
        loaded.map((e) => off.log({ api_key: KEY, timestamp: e.timestamp, json: e.json })),
      );
      for (const answer of answers) expect(answer.status).toBe(200);
      logged.push(...loaded);
      const [days] = await compareAll();
      expect(answeredDays(days as string)).toEqual(dayCounts());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the planner reads them: a row written into them by hand changes what reads them', async () => {
    const answers = await compareAll();
    const whole: string[] = [];
    for (const request of WHOLE_WINDOW_REQUESTS) {
      const [a, b] = await Promise.all([text(on, request), text(off, request)]);
      expect(a, JSON.stringify(request)).toBe(b);
      whole.push(a);
    }
    // A hundred `view` events of plan `pro` and `u` 7 on 2024-02-10 at noon, one with `ms` 0.1
    // (off the exact sums' grid), which the events sent do not hold.
    const span = Date.UTC(2024, 1, 10, 12) / 1000 / 900;
    await direct.command({
      query: `INSERT INTO \`${places.on}default\`._engine_rollup_15m
                (collection, span, k0, k1, k2, kn2, n, s0_n, s0_r)
              VALUES ({c:String}, {span:Int64}, 'view', 'pro', '7', 7, 100, 1, [0.1])`,
      query_params: { c: DEFAULT_COLLECTION, span },
    });
    const changed: number[] = [];
    for (const [i, request] of REQUESTS.entries()) {
      if ((await text(on, request)) !== answers[i]) changed.push(i);
      // The engine without rollups never changes.
      expect(await text(off, request)).toBe(answers[i]);
    }
    // Every request on `event` and `plan` reads the row (Sum and Avg its off-grid value) but the
    // Ratio Line (neither `buy` nor a plan above 2); the two on `u`, past the bound, read the events.
    expect(changed).toEqual([0, 1, 2, 3, 4, 5]);
    // The same for one value over the whole window (its compare window too): all but the Bar
    // Chart on `u`.
    const after = await Promise.all(WHOLE_WINDOW_REQUESTS.map((r) => text(on, r)));
    expect(after.map((a, i) => a !== whole[i])).toEqual([true, true, true, false]);
    const value = (answer: string | undefined) => JSON.parse(answer?.slice(4) ?? '{}');
    const [single, table, pie] = after.map(value);
    const [single0, table0, pie0] = whole.map(value);
    expect(single.result[0].Count).toBe(single0.result[0].Count + 100);
    expect(single.compare_result[0].Count).toBe(single0.compare_result[0].Count + 100);
    const pro = (body: { result: Array<Record<string, unknown>> }) =>
      body.result.find((row) => row.plan === 'pro')?.['Sum(ms)'];
    expect(pro(table)).toBeCloseTo((pro(table0) as number) + 0.1, 6);
    const view = (body: { result: Array<Record<string, unknown>> }) =>
      body.result.find((row) => row.event === 'view')?.['Avg(ms)'];
    expect(view(pie)).not.toBe(view(pie0));
    for (const [i, request] of WHOLE_WINDOW_REQUESTS.entries()) {
      expect(await text(off, request)).toBe(whole[i]);
    }
    const days = answeredDays((await text(on, REQUESTS[0] as Record<string, unknown>)).toString());
    const expected = dayCounts();
    expected.set('2024-02-10', (expected.get('2024-02-10') ?? 0) + 100);
    expect(days).toEqual(expected);
  });
});

/** An engine on `clickhouse` whose workspace `default` keeps the rollups of `spec`. */
function rolledEngine(
  clickhouse: NonNullable<EngineOptions['clickhouse']>,
  spec: { keys: string[]; sums: string[] },
  rollupReads?: 'always',
): Promise<Engine> {
  return createEngine({
    ...(rollupReads ? { rollupReads } : {}),
    dataDir: '/nonexistent',
    clickhouse,
    workspaces: { default: KEY },
    now: () => NOW,
    rollups: { default: spec },
    logError: () => undefined,
  });
}

describe('the planner weighs the rollup rows against the events', () => {
  test('a collection with about a rollup row per event reads its events, as one of too few events does; told to, both read rollups', async () => {
    const prefix = `w${randomBytes(4).toString('hex')}_`;
    const clickhouse = { url, password, databasePrefix: prefix };
    const spec = { keys: ['e'], sums: [] };
    const dir = mkdtempSync(join(tmpdir(), 'rollups-weigh-'));
    let engine: Engine | undefined;
    const open = (rollupReads?: 'always') => rolledEngine(clickhouse, spec, rollupReads);
    try {
      // Over 40 days, one event an hour in `sparse` (a row each) and 10 of one key value in `dense`.
      for (const [collection, perHour] of [
        ['sparse', 1],
        ['dense', 10],
      ] as const) {
        const file = join(dir, `${collection}.ndjson`);
        const lines = Array.from({ length: 40 * 24 * perHour }, (_, i) =>
          JSON.stringify({ timestamp: START + Math.floor(i / perHour) * 3600, json: { e: 'x' } }),
        );
        writeFileSync(file, `${lines.join('\n')}\n`);
        await loadIntoClickHouse(file, clickhouse, 'default', collection, {
          workers: 0,
          rollups: spec,
        });
      }
      // One more row in each, in the window's second day, that only a rollup read adds.
      for (const collection of ['sparse', 'dense']) {
        await direct.command({
          query: `INSERT INTO \`${prefix}default\`._engine_rollup_15m (collection, span, k0, kn0, n)
                  VALUES ({c:String}, {span:Int64}, 'x', NULL, 1)`,
          query_params: { c: collection, span: (START + DAY) / 900 + 1 },
        });
      }
      const total = async (collection: string) => {
        const answer = await (engine as Engine).query({
          api_key: KEY,
          collection,
          graph_type: 'Single Value',
          aggregation: 'Count',
          start: START - 1,
          end: START + 30 * DAY - 1,
          IANA_time_zone: 'UTC',
        });
        return (answer.body as { result: Array<{ Count: number }> }).result[0]?.Count;
      };
      // What the planner weighs, counted by ClickHouse: every collection's rows per event, and
      // its events per span with any (the hand-written row adds a span and an event to each).
      const rollups = new ClickHouseRollups(direct, `${prefix}default`, spec);
      const figures = await rollups.lookup();
      for (const [collection, perHour] of [
        ['sparse', 1],
        ['dense', 10],
      ] as const) {
        const events = 40 * 24 * perHour + 1;
        const spans = 40 * 24 + 1;
        expect(figures.rowsPerEvent(collection)).toBeCloseTo(spans / events, 9);
        expect(figures.eventsPerSpan(collection)).toBeCloseTo(events / spans, 9);
      }
      expect(figures.eventsPerSpan('absent')).toBeUndefined();
      // Kept without keys, the figures are still counted, in an answer of one row.
      const answers: string[] = [];
      const proxy = await clickHouseProxy(url, {
        after(_statement, answer) {
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () => answers.push(Buffer.concat(chunks).toString()));
          return false;
        },
      });
      const keyless = createClient({ url: proxy.url, password });
      try {
        const counts = new ClickHouseRollups(keyless, `${prefix}default`, { keys: [], sums: [] });
        const figured = await counts.lookup();
        expect(figured.eventsPerSpan('dense')).toBeCloseTo((40 * 24 * 10 + 1) / (40 * 24 + 1), 9);
        expect(answers.map((a) => a.trim().split('\n').length)).toEqual([1]);
      } finally {
        await keyless.close();
        proxy.close();
      }
      engine = await open();
      // 30 days of hours: the events' count in `sparse`, and in `dense` too, whose rollups cost
      // less than its events but whose window holds too few events to repay a rollup read.
      expect(await total('sparse')).toBe(30 * 24);
      expect(await total('dense')).toBe(30 * 24 * 10);
      await engine.close();
      // Told to read rollups wherever they answer, both read them.
      engine = await open('always');
      expect(await total('sparse')).toBe(30 * 24 + 1);
      expect(await total('dense')).toBe(30 * 24 * 10 + 1);
    } finally {
      await engine?.close();
      rmSync(dir, { recursive: true, force: true });
      await direct.command({ query: `DROP DATABASE IF EXISTS \`${prefix}default\`` });
    }
  });
});

describe('a dense collection reads rollups for a short window', () => {
  test(`once its whole spans hold ${CLICKHOUSE_MIN_ROLLUP_EVENTS.Count} events for Count, ${CLICKHOUSE_MIN_ROLLUP_EVENTS.Avg} for Avg`, async () => {
    const prefix = `w${randomBytes(4).toString('hex')}_`;
    const clickhouse = { url, password, databasePrefix: prefix };
    const spec = { keys: ['e'], sums: ['v'] };
    const dir = mkdtempSync(join(tmpdir(), 'rollups-dense-'));
    let engine: Engine | undefined;
    try {
      // Two days of one event an hour (v = 2), and one rollup row written by hand in the second
      // day's noon span that stands for ten million events without a sum: the collection's
      // events per span is then about 200,000, and only a rollup read adds the row.
      const file = join(dir, 'hot.ndjson');
      const lines = Array.from({ length: 48 }, (_, i) =>
        JSON.stringify({ timestamp: START + i * 3600, json: { e: 'x', v: 2 } }),
      );
      writeFileSync(file, `${lines.join('\n')}\n`);
      await loadIntoClickHouse(file, clickhouse, 'default', 'hot', { workers: 0, rollups: spec });
      const noon = START + DAY + 12 * 3600;
      await direct.command({
        query: `INSERT INTO \`${prefix}default\`._engine_rollup_15m
                  (collection, span, k0, kn0, n, s0_h, s0_m, s0_l, s0_n, s0_r)
                VALUES ('hot', {span:Int64}, 'x', NULL, 10000000, 0, 0, 0, 10000000, [])`,
        query_params: { span: noon / 900 },
      });
      engine = await rolledEngine(clickhouse, spec);
      const value = async (aggregation: 'Count' | 'Avg', start: number, end: number) => {
        const answer = await (engine as Engine).query({
          api_key: KEY,
          collection: 'hot',
          graph_type: 'Single Value',
          aggregation,
          ...(aggregation === 'Avg' ? { metric: 'v' } : {}),
          start,
          end,
          IANA_time_zone: 'UTC',
        });
        const [row] = (answer.body as { result: Array<Record<string, number>> }).result;
        return row?.[aggregation === 'Avg' ? 'Avg(v)' : 'Count'];
      };
      // From ten minutes past 11:00 to 14:59:59 (15 whole spans, events before them): Count
      // reads the rollups (the events at 12:00, 13:00 and 14:00, and the row), Avg the events.
      const hours = [noon - 3600 + 600, noon + 3 * 3600 - 1] as const;
      expect(await value('Count', ...hours)).toBe(3 + 10_000_000);
      expect(await value('Avg', ...hours)).toBe(2);
      // Both days whole (192 spans) hold enough for Avg: 48 events of 2 over 48 and the row's.
      expect(await value('Avg', START - 1, START + 2 * DAY - 1)).toBe(96 / (48 + 10_000_000));
    } finally {
      await engine?.close();
      rmSync(dir, { recursive: true, force: true });
      await direct.command({ query: `DROP DATABASE IF EXISTS \`${prefix}default\`` });
    }
  });
});

describe("the count of the keys' distinct values", () => {
  test('only the first is waited for: a later one runs while queries read the last', async () => {
    // A ClickHouse that answers the first count (the second key past the bound) and never the next.
    const asked: string[] = [];
    const server = createServer((req, res) => {
      req.resume();
      asked.push(String(req.url));
      if (asked.length === 1) res.end(`[3, ${MAX_KEY_VALUES + 1}]\n`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const client = createClient({ url: `http://127.0.0.1:${port}` });
    try {
      const rollups = new ClickHouseRollups(client, 'db', { keys: ['event', 'u'], sums: [] });
      const first = await rollups.lookup();
      expect([first.keyColumns('event'), first.keyColumns('u')]).toEqual([
        { string: 'k0', number: 'kn0' },
        null,
      ]);
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.now() + 31_000);
      const later = await Promise.race([
        rollups.lookup(),
        new Promise<null>((resolve) => setTimeout(() => resolve(null), 2_000)),
      ]);
      // Answered from the last count while the next one is under way.
      expect(later?.keyColumns('u')).toBeNull();
      expect(later?.keyColumns('event')).toEqual({ string: 'k0', number: 'kn0' });
      // And the next count was asked for.
      await vi.waitFor(() => expect(asked).toHaveLength(2));
    } finally {
      vi.useRealTimers();
      server.closeAllConnections();
      server.close();
      await client.close();
    }
  });
});

describe('automatic rollup keys on ClickHouse', () => {
  /** Queries that read rollups once `plan` and the sums of `ms` are kept, and one on `event`. */
  const SHAPES: Array<Record<string, unknown>> = [
    {
      graph_type: 'Multi Line',
      granularity: 'Day',
      IANA_time_zone: 'UTC',
      split: 'plan',
      aggregation: 'Avg',
      metric: 'ms',
    },
    {
      graph_type: 'Single Line',
      granularity: 'Week',
      IANA_time_zone: 'Europe/London',
      aggregation: 'Sum',
      metric: 'ms',
      filters: [['plan', '=', 'pro']],
    },
    {
      graph_type: 'Single Line',
      granularity: 'Day',
      IANA_time_zone: 'UTC',
      filters: [['event', '≠', 'view']],
    },
  ];
  const prefixes: string[] = [];
  afterAll(async () => {
    for (const prefix of prefixes) {
      await direct.command({ query: `DROP DATABASE IF EXISTS \`${prefix}default\`` });
    }
  });

  /** Engines on one fresh database prefix: `auto` with `event` declared, and one without rollups. */
  function place(logs: string[]) {
    const prefix = `a${randomBytes(4).toString('hex')}_`;
    prefixes.push(prefix);
    const engine = (rollups: EngineOptions['rollups'], at = prefix) =>
      createEngine({
        rollupReads: 'always',
        dataDir: '/nonexistent',
        clickhouse: { url, password, databasePrefix: at },
        workspaces: { default: KEY },
        now: () => NOW,
        rollups,
        logError: (message, error) => logs.push(`${message} ${error ?? ''}`),
      });
    const offPrefix = `${prefix}off_`;
    prefixes.push(offPrefix);
    return {
      prefix,
      auto: () => engine({ default: { keys: ['event'], auto: true } }),
      declared: () => engine({ default: { keys: ['event'] } }),
      unset: () => engine(undefined),
      off: () => engine(false, offPrefix),
    };
  }

  /** The generation tables (those the engine added), by name, and their comments. */
  async function addedTables(prefix: string): Promise<Array<{ name: string; comment: string }>> {
    const result = await direct.query({
      query: `SELECT name, comment FROM system.tables WHERE database = {db:String}
        AND match(name, '^_engine_rollup_15m_[0-9a-f]+$') ORDER BY name`,
      query_params: { db: `${prefix}default` },
      format: 'JSONEachRow',
    });
    return result.json<{ name: string; comment: string }>();
  }

  const send = async (engines: Engine[], list: Event[]) => {
    for (const engine of engines) {
      const answers = await Promise.all(
        list.map((e) => engine.log({ api_key: KEY, timestamp: e.timestamp, json: e.json })),
      );
      for (const a of answers) expect(a.status).toBe(200);
    }
  };
  const added = (logs: string[]) => logs.filter((line) => line.includes('rollups now also kept'));

  test('keys that queries use are added, and answers stay the events’, inserts during the switch included', async () => {
    const logs: string[] = [];
    const at = place(logs);
    let [auto, off] = await Promise.all([at.auto(), at.off()]);
    try {
      await send([auto, off], events(5, 300, START - DAY, NOW));
      const before = await Promise.all(SHAPES.map((shape) => text(off, shape)));
      // Two queries a round use `plan` and `ms`: the last round's starts the addition.
      for (let round = 0; round < AUTO_MIN_QUERIES / 2; round++) {
        for (const [i, shape] of SHAPES.entries()) expect(await text(auto, shape)).toBe(before[i]);
      }
      expect(await addedTables(at.prefix)).toEqual([]);
      // Events keep arriving while the addition runs: on both sides of its boundary.
      let seed = 100;
      while (added(logs).length === 0 && seed < 400) {
        await send([auto, off], events(seed++, 5, START, NOW));
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(added(logs).join('\n')).toMatch(/key plan, sums of ms/);
      // At least one round ran during the addition, whose boundary sits a moment ahead of its
      // start; how many more depends on the machine's load, so the count is not asserted.
      expect(seed).toBeGreaterThan(100);
      await send([auto, off], events(seed, 50, START, NOW));
      const tables = await addedTables(at.prefix);
      expect(tables.map((t) => JSON.parse(t.comment))).toEqual([
        { keys: ['event', 'plan'], sums: ['ms'] },
      ]);
      for (const shape of SHAPES) expect(await text(auto, shape)).toBe(await text(off, shape));
      // A restart with `auto` keeps the added table.
      await auto.close();
      auto = await at.auto();
      expect(await addedTables(at.prefix)).toEqual(tables);
      // The new table is what they read: a row written into it by hand (a hundred `view` events
      // of plan `pro`, one with `ms` 0.1) changes the two that read `plan`, not the one without `view`.
      const answers = await Promise.all(SHAPES.map((shape) => text(auto, shape)));
      await direct.command({
        query: `INSERT INTO \`${at.prefix}default\`.\`${tables[0]?.name}\` (collection, span, k0, k1, n, s0_n, s0_r)
                VALUES ({c:String}, {span:Int64}, 'view', 'pro', 100, 1, [0.1])`,
        query_params: { c: DEFAULT_COLLECTION, span: Date.UTC(2024, 1, 10, 12) / 1000 / 900 },
      });
      const changed = [];
      for (const [i, shape] of SHAPES.entries()) {
        if ((await text(auto, shape)) !== answers[i]) changed.push(i);
      }
      expect(changed).toEqual([0, 1]);
      // Declaring the keys again without `auto` drops the added table (and the row with it).
      await auto.close();
      auto = await at.declared();
      expect(await addedTables(at.prefix)).toEqual([]);
      for (const shape of SHAPES) expect(await text(auto, shape)).toBe(await text(off, shape));
    } finally {
      await Promise.all([auto.close(), off.close()]);
    }
  }, 60_000);

  test('two engines sharing the ClickHouse that decide at once add one table, and both read it', async () => {
    const logs: string[] = [];
    const at = place(logs);
    const [one, two, off] = await Promise.all([at.auto(), at.auto(), at.off()]);
    // A replica started without the option, which reads what the workspace has.
    const three = await at.unset();
    try {
      await send([one, off], events(6, 200, START - DAY, NOW));
      const shape = { ...SHAPES[0], aggregation: 'Count', metric: null };
      const expected = await text(off, shape);
      expect(await text(three, shape)).toBe(expected);
      for (let round = 0; round < AUTO_MIN_QUERIES; round++) {
        expect(await Promise.all([text(one, shape), text(two, shape)])).toEqual([
          expected,
          expected,
        ]);
      }
      for (let wait = 0; wait < 400 && added(logs).length < 2; wait++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      // Each engine reports the key kept, one having built the table and the other taken it up.
      expect(added(logs)).toHaveLength(2);
      const tables = await addedTables(at.prefix);
      expect(tables.map((t) => JSON.parse(t.comment))).toEqual([
        { keys: ['event', 'plan'], sums: [] },
      ]);
      await send([two, off], events(7, 40, START, NOW));
      const now = await text(off, shape);
      expect(now).not.toBe(expected);
      expect([await text(one, shape), await text(two, shape)]).toEqual([now, now]);
      // Both read the added table: a row written into it by hand changes both answers alike.
      await direct.command({
        query: `INSERT INTO \`${at.prefix}default\`.\`${tables[0]?.name}\` (collection, span, k0, k1, n)
                VALUES ({c:String}, {span:Int64}, 'view', 'pro', 100)`,
        query_params: { c: DEFAULT_COLLECTION, span: Date.UTC(2024, 1, 10, 12) / 1000 / 900 },
      });
      const tampered = await text(one, shape);
      expect(tampered).not.toBe(now);
      expect(await text(two, shape)).toBe(tampered);
      // The third has not looked since it opened: its table lacks `plan`, so it reads the events
      // until its next look, which a query waits for once the last is a minute old.
      expect(await text(three, shape)).toBe(now);
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.now() + 61_000);
      expect(await text(three, shape)).toBe(tampered);
    } finally {
      vi.useRealTimers();
      await Promise.all([one.close(), two.close(), three.close(), off.close()]);
    }
  }, 60_000);
});
