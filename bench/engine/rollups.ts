/**
 * `tsx bench/engine/rollups.ts [--events N] [--rounds R]`: the engine on DuckDB with rollups
 * (`storage/duckdb/rollups.ts`, kept by `event`, `plan` and `country` with the sums of `price`) on and off
 * over the same demo events (one file loaded by
 * `engine load`, then copied; the copy opened with rollups on builds them from its events),
 * in process: the median of R alternating rounds of each query that rollups answer, each
 * answer checked to be the same text on both, and `/api/bulk-log` ingest in batches of 1,000 in
 * alternating rounds, events per second. Prints a table; figures go to commit messages.
 */
import { execFileSync } from 'node:child_process';
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
const KEY = 'bench-rollups-key';
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

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bench-rollups-'));
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
    const off = join(dir, 'off');
    const on = join(dir, 'on');
    mkdirSync(on);
    execFileSync(process.execPath, [CLI, 'load', '--data', off, file], { stdio: 'ignore' });
    copyFileSync(join(off, 'default.duckdb'), join(on, 'default.duckdb'));
    const open = (dataDir: string, rollups: boolean) =>
      createEngine({
        dataDir,
        workspaces: { default: KEY },
        rollups: rollups && { default: { keys: ['event', 'plan', 'country'], sums: ['price'] } },
        now: () => NOW,
      });
    const engines: Record<'on' | 'off', Engine> = {
      off: await open(off, false),
      on: undefined as unknown as Engine,
    };
    const built = performance.now();
    engines.on = await open(on, true);
    log(
      `events: ${EVENTS.toLocaleString('en-US')}; rollups built at open in ${((performance.now() - built) / 1000).toFixed(2)} s`,
    );
    // Every query once on each engine first, so that no query pays for a cold file.
    for (const q of [...QUERIES, ...KEYED_QUERIES]) {
      for (const side of ['off', 'on'] as const) {
        await engines[side].query({ api_key: KEY, ...q.body });
      }
    }
    log('| query | rollups off (ms) | rollups on (ms) | off / on |');
    log('|---|---|---|---|');
    for (const q of [...QUERIES, ...KEYED_QUERIES]) {
      const times = { on: [] as number[], off: [] as number[] };
      const body = { api_key: KEY, ...q.body };
      for (let r = 0; r < ROUNDS + 2; r++) {
        const texts: string[] = [];
        for (const side of r % 2 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
          const t = performance.now();
          const answer = await engines[side].query(body);
          const ms = performance.now() - t;
          if (answer.status !== 200) throw new Error(`${q.name}: ${answer.status}`);
          texts.push(JSON.stringify(answer.body));
          if (r >= 2) times[side].push(ms);
        }
        if (texts[0] !== texts[1]) throw new Error(`${q.name}: the answers differ`);
      }
      const a = median(times.off);
      const b = median(times.on);
      log(`| ${q.name} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(a / b).toFixed(2)} |`);
    }
    // Ingest: bulk logs of 1,000 demo events, alternating, each engine the same batches.
    const batches = Array.from({ length: 40 }, (_, b) => ({
      api_key: KEY,
      jsons: [...demoEventObjects(1000, 100 + b, NOW)].map((e) => e.json),
    }));
    const rates = { on: [] as number[], off: [] as number[] };
    for (const [b, batch] of batches.entries()) {
      for (const side of b % 2 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        const t = performance.now();
        const answer = await engines[side].bulkLog(batch);
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
          const answer = await engines[side].log({ api_key: KEY, json });
          if (answer.status !== 200) throw new Error(`log: ${answer.status}`);
        }
        logs[side].push(200 / ((performance.now() - t) / 1000));
      }
    }
    log(
      `log, one event per request (median events/s over rounds of 200): off ${Math.round(median(logs.off))}, on ${Math.round(median(logs.on))} (on/off ${(median(logs.on) / median(logs.off)).toFixed(2)})`,
    );
    await Promise.all([engines.on.close(), engines.off.close()]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
