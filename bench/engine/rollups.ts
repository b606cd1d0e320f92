/**
 * `tsx bench/engine/rollups.ts [--events N] [--rounds R] [--clickhouse] [--queries-only]
 * [--rollup-keys K,…]`: the engine with rollups (kept by `event`, `plan` and `country`, or the
 * keys given, with the sums of `price`) on and off over the same demo events, in process: on
 * DuckDB one file loaded by `engine load`, then
 * copied (a copy opened with rollups on builds them from its events); with `--clickhouse`, chdb
 * over HTTP in a child process (`clickhouse-server.ts`), the file loaded by `engine load
 * --clickhouse` into two workspaces, one keeping rollups. Three sides: `off`, `on` (the planner
 * weighs rollup rows against events, the default) and `always` (engine option `rollupReads:
 * 'always'`, rollups read wherever they answer): the median of R rounds of each query that
 * rollups may answer, the sides' order rotating each round, every answer checked to be the same
 * text on all three; then, unless `--queries-only`, `/api/bulk-log` ingest in batches of 1,000
 * and `/api/log` one event at a time, off and on alternating, events per second. Prints tables;
 * figures go to commit messages.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createEngine, demoEventObjects, type Engine } from '@analytics-chart/engine';
import { median } from '../stats.ts';
import { listening } from './child-url.ts';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const text = String(args[i + 1]).toUpperCase();
  const scale = text.endsWith('M') ? 1e6 : text.endsWith('K') ? 1e3 : 1;
  return Math.round(Number.parseFloat(text) * scale);
};
const EVENTS = arg('--events', 1_000_000);
const ROUNDS = arg('--rounds', 30);
const CLICKHOUSE = args.includes('--clickhouse');
const QUERIES_ONLY = args.includes('--queries-only');
const KEY = 'bench-rollups-key';
const KEYS_AT = args.indexOf('--rollup-keys');
const SPEC = {
  keys: KEYS_AT < 0 ? ['event', 'plan', 'country'] : String(args[KEYS_AT + 1]).split(','),
  sums: ['price'],
};
const CLICKHOUSE_SERVER = new URL('./clickhouse-server.ts', import.meta.url).pathname;
const NOW = Math.floor(Date.now() / 1000);

const require = createRequire(import.meta.url);
const CLI = join(
  dirname(require.resolve('@analytics-chart/engine/package.json')),
  'dist/cli/main.js',
);

/** Count per bucket over windows from a day to a quarter, which rollups may answer. */
const QUERIES: Array<{ name: string; body: Record<string, unknown> }> = [
  ['Hour', 1, 'Asia/Kathmandu'],
  ['Hour', 3, 'Asia/Kathmandu'],
  ['Hour', 7, 'UTC'],
  ['Hour', 14, 'UTC'],
  ['Hour', 30, 'UTC'],
  ['Day', 7, 'America/Los_Angeles'],
  ['Day', 21, 'America/Los_Angeles'],
  ['Day', 30, 'America/Los_Angeles'],
  ['Day', 45, 'America/Los_Angeles'],
  ['Day', 60, 'America/Los_Angeles'],
  ['Week', 90, 'Europe/London'],
].map(([granularity, days, zone]) => ({
  name: `Count per ${granularity}, ${days} days, ${zone}`,
  body: {
    graph_type: 'Single Line',
    aggregation: 'Count',
    granularity,
    start: `${days} days ago`,
    end: 'now',
    IANA_time_zone: zone,
  },
}));

/** What the rollups' keys and sums answer: splits, filters on the keys, Sum and Avg, lines and tables. */
const KEYED_QUERIES: Array<{ name: string; body: Record<string, unknown> }> = [
  ...[1, 3, 7, 30].map((days) => ({
    name: `Count per Hour split by event, ${days} days, UTC`,
    body: {
      graph_type: 'Multi Line',
      aggregation: 'Count',
      split: 'event',
      granularity: 'Hour',
      days,
    },
  })),
  ...[3, 7, 30, 90].map((days) => ({
    name: `Sum of price per Day, plan = pro, ${days} days, UTC`,
    body: {
      graph_type: 'Single Line',
      aggregation: 'Sum',
      metric: 'price',
      filters: [['plan', '=', 'pro']],
      granularity: 'Day',
      days,
    },
  })),
  ...[3, 30].map((days) => ({
    name: `Avg of price per Day split by plan, event = purchase, ${days} days, UTC`,
    body: {
      graph_type: 'Multi Line',
      aggregation: 'Avg',
      metric: 'price',
      split: 'plan',
      filters: [['event', '=', 'purchase']],
      granularity: 'Day',
      days,
    },
  })),
  {
    name: 'Table split by country, 90 days, UTC',
    body: { graph_type: 'Table', aggregation: 'Count', split: 'country', days: 90 },
  },
  {
    name: 'Single Value, Sum of price, plan = pro, 90 days, UTC',
    body: {
      graph_type: 'Single Value',
      aggregation: 'Sum',
      metric: 'price',
      filters: [['plan', '=', 'pro']],
      days: 90,
    },
  },
  {
    name: 'Pie Chart, Avg of price split by plan, 30 days, UTC',
    body: { graph_type: 'Pie Chart', aggregation: 'Avg', metric: 'price', split: 'plan', days: 30 },
  },
].map(({ name, body: { days, ...body } }) => ({
  name,
  body: { ...body, start: `${days} days ago`, end: 'now', IANA_time_zone: 'UTC' },
}));

function log(line: string) {
  process.stdout.write(`${line}\n`);
}

/** The sides compared: rollups off, on as the planner weighs them, and on wherever they answer. */
const SIDES = ['off', 'on', 'always'] as const;
type Side = (typeof SIDES)[number];

/** Each side's engine and the API key its requests carry. */
type Sides = Record<Side, { engine: Engine; key: string }>;

/** DuckDB: the file loaded once, copied for each side that keeps rollups (built at open). */
async function duckDbSides(dir: string, file: string): Promise<Sides> {
  const path = (side: Side) => join(dir, side);
  execFileSync(process.execPath, [CLI, 'load', '--data', path('off'), file], { stdio: 'ignore' });
  for (const side of ['on', 'always'] as const) {
    mkdirSync(path(side));
    copyFileSync(join(path('off'), 'default.duckdb'), join(path(side), 'default.duckdb'));
  }
  const open = (side: Side) =>
    createEngine({
      dataDir: path(side),
      workspaces: { default: KEY },
      rollups: side !== 'off' && { default: SPEC },
      ...(side === 'always' ? { rollupReads: 'always' as const } : {}),
      now: () => NOW,
    });
  const off = await open('off');
  const built = performance.now();
  const on = await open('on');
  log(`rollups built at open in ${((performance.now() - built) / 1000).toFixed(2)} s`);
  const always = await open('always');
  return {
    off: { engine: off, key: KEY },
    on: { engine: on, key: KEY },
    always: { engine: always, key: KEY },
  };
}

/**
 * ClickHouse: the file loaded into workspace `off`, and into `on` keeping rollups; `always` is a
 * second engine on `on`'s database (as a replica is), reading them wherever they answer.
 */
async function clickHouseSides(url: string, file: string): Promise<Sides> {
  const env = { ...process.env, CLICKHOUSE_USER: 'default', CLICKHOUSE_PASSWORD: '' };
  const load = (workspace: string, flags: string[]) => {
    const t = performance.now();
    execFileSync(
      process.execPath,
      [CLI, 'load', '--clickhouse', url, '--workspace', workspace, ...flags, file],
      { stdio: 'ignore', env },
    );
    log(
      `engine load --clickhouse into ${workspace}: ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
  };
  load('off', []);
  load('on', ['--rollup-keys', SPEC.keys.join(','), '--rollup-sums', SPEC.sums.join(',')]);
  const keys = { off: `${KEY}-off`, on: `${KEY}-on` };
  const open = (reads: 'always' | undefined) =>
    createEngine({
      dataDir: '/nonexistent',
      clickhouse: { url, password: '' },
      workspaces: { off: keys.off, on: keys.on },
      rollups: { on: SPEC },
      ...(reads ? { rollupReads: reads } : {}),
      now: () => NOW,
    });
  const engine = await open(undefined);
  const always = await open('always');
  return {
    off: { engine, key: keys.off },
    on: { engine, key: keys.on },
    always: { engine: always, key: keys.on },
  };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bench-rollups-'));
  let server: ChildProcess | undefined;
  try {
    const file = join(dir, 'events.ndjson');
    // Written in chunks: millions of lines pass the longest string V8 holds.
    writeFileSync(file, '');
    let lines: string[] = [];
    for (const { timestamp, json } of demoEventObjects(EVENTS, 42, NOW)) {
      lines.push(`{"timestamp":${timestamp},"json":${JSON.stringify(json)}}`);
      if (lines.length === 100_000) {
        appendFileSync(file, `${lines.join('\n')}\n`);
        lines = [];
      }
    }
    if (lines.length) appendFileSync(file, `${lines.join('\n')}\n`);
    log(`events: ${EVENTS.toLocaleString('en-US')} (${CLICKHOUSE ? 'ClickHouse' : 'DuckDB'})`);
    let sides: Sides;
    if (CLICKHOUSE) {
      server = spawn(process.execPath, ['--import', 'tsx', CLICKHOUSE_SERVER, join(dir, 'ch')], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      sides = await clickHouseSides(await listening(server), file);
    } else sides = await duckDbSides(dir, file);
    const ask = (side: Side, body: Record<string, unknown>) =>
      sides[side].engine.query({ api_key: sides[side].key, ...body });
    // Every query once on each side first, so that no query pays for a cold file.
    for (const q of [...QUERIES, ...KEYED_QUERIES]) {
      for (const side of SIDES) await ask(side, q.body);
    }
    log(
      '| query | rollups off (ms) | on, weighed (ms) | on, always (ms) | off / on | off / always |',
    );
    log('|---|---|---|---|---|---|');
    for (const q of [...QUERIES, ...KEYED_QUERIES]) {
      const times: Record<Side, number[]> = { off: [], on: [], always: [] };
      for (let r = 0; r < ROUNDS + 2; r++) {
        const texts: string[] = [];
        // The order rotates, so that no side always runs first (or after the same one).
        const order = SIDES.map((_, i) => SIDES[(i + r) % SIDES.length] as Side);
        for (const side of order) {
          const t = performance.now();
          const answer = await ask(side, q.body);
          const ms = performance.now() - t;
          if (answer.status !== 200) throw new Error(`${q.name}: ${answer.status}`);
          texts.push(JSON.stringify(answer.body));
          if (r >= 2) times[side].push(ms);
        }
        if (texts.some((t) => t !== texts[0])) throw new Error(`${q.name}: the answers differ`);
      }
      const [a, b, c] = SIDES.map((side) => median(times[side])) as [number, number, number];
      log(
        `| ${q.name} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${c.toFixed(2)} | ${(a / b).toFixed(2)} | ${(a / c).toFixed(2)} |`,
      );
    }
    if (!QUERIES_ONLY) await ingest(sides);
    const engines = new Set(SIDES.map((side) => sides[side].engine));
    await Promise.all([...engines].map((e) => e.close()));
  } finally {
    server?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Ingest with rollups on and off: bulk logs of 1,000 demo events, then single logs, alternating. */
async function ingest(sides: Sides): Promise<void> {
  const batches = Array.from({ length: 40 }, (_, b) => ({
    jsons: [...demoEventObjects(1000, 100 + b, NOW)].map((e) => e.json),
  }));
  const rates = { on: [] as number[], off: [] as number[] };
  for (const [b, batch] of batches.entries()) {
    for (const side of b % 2 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
      const t = performance.now();
      const answer = await sides[side].engine.bulkLog({ api_key: sides[side].key, ...batch });
      if (answer.status !== 200) throw new Error(`bulk-log: ${answer.status}`);
      rates[side].push(1000 / ((performance.now() - t) / 1000));
    }
  }
  log(
    `bulk-log, batches of 1,000 (median events/s): off ${Math.round(median(rates.off))}, on ${Math.round(median(rates.on))} (on/off ${(median(rates.on) / median(rates.off)).toFixed(2)})`,
  );
  // Live ingest: one event per /api/log, alternating, which the periodic merges keep up with.
  const logs = { on: [] as number[], off: [] as number[] };
  const singles = [...demoEventObjects(4000, 7, NOW)];
  for (let b = 0; b < 20; b++) {
    for (const side of b % 2 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
      const t = performance.now();
      for (const { json } of singles.slice(b * 200, b * 200 + 200)) {
        const answer = await sides[side].engine.log({ api_key: sides[side].key, json });
        if (answer.status !== 200) throw new Error(`log: ${answer.status}`);
      }
      logs[side].push(200 / ((performance.now() - t) / 1000));
    }
  }
  log(
    `log, one event per request (median events/s over rounds of 200): off ${Math.round(median(logs.off))}, on ${Math.round(median(logs.on))} (on/off ${(median(logs.on) / median(logs.off)).toFixed(2)})`,
  );
}

await main();
