/**
 * `pnpm bench engine [--events N] [--driver all|duckdb|clickhouse] [--runs R] [--load-runs L]
 * [--keep] [--load-only] [--bulk-only] [--ch-queries-only [--ch-other-engine BIN] [--ch-rollups]]
 * [--ch-key-columns KEY,...]
 * [--rollup-ingest-only [--rounds R] [--other-engine BIN]]`: the
 * engine on generated demo events, on both storage drivers (`--driver` picks one;
 * `--events` takes `1M`, `10M`, `30M`). `--wide` runs only the wide-events section
 * (`wide-events.ts`), written to `bench/results/engine-wide.md`; `--load-only` stops after the
 * DuckDB load rounds and prints their figures; `--bulk-only` skips the queries and prints the
 * `/api/bulk-log` figures of 200,000 events after the loads (`--driver clickhouse --events 100k
 * --load-runs 1` measures ClickHouse's in a few minutes), writing nothing to `bench/results/`;
 * `--ch-queries-only` loads ClickHouse once and prints only the engine on ClickHouse against the
 * hand-written statements over HTTP, with `--ch-other-engine` another build's `analytics-engine`
 * bin (e.g. a worktree of main) served on the same ClickHouse and measured in the same rounds,
 * and with `--ch-rollups` the engine on a second workspace loaded from the same file with rollups
 * by event and plan and the sums of price (its load timed apart), measured in the same rounds.
 * `--ch-key-columns KEY,...` adds, to the ClickHouse load rounds, bulk-log and the queries of
 * `--ch-queries-only`, the engine on a workspace of its own whose engines give columns to those
 * keys only (`--clickhouse-key-columns`), as the hand-written table types only the keys its
 * statements read.
 * `--rollup-ingest-only` runs only the comparison of `/api/bulk-log` with rollups on and off
 * (`rollup-ingest.ts`, on DuckDB or with `--driver clickhouse` on ClickHouse, R rounds of 20,000
 * events per side, default 20; a minute or two),
 * with `--other-engine` another build's `analytics-engine` bin (e.g. the compiled CLI of a
 * worktree of main) on and off in the same rounds, and prints the figures, writing nothing.
 * From 50M events (or with `--scale`) it runs `scale.ts` instead: rollup-answered queries at
 * that size against 1M, on DuckDB (`--keep` leaves both workspaces for a profile).
 *
 * For each query the median end-to-end time over HTTP of `engine serve` (a child process) on
 * DuckDB and of `engine serve --clickhouse` on ClickHouse's HTTP interface (chdb behind the
 * engine tests' wire server, `clickhouse-server.ts`), beside baselines measured in the same run:
 * the same aggregation as hand-written DuckDB SQL over flat typed top-level columns (the floor:
 * a table DuckDB's `read_ndjson` filled from the same file, in the engine's storage format), in
 * process and behind a bare Hono route in a process of its own (`floor-server.ts`); a plain
 * JavaScript loop over the events in typed arrays; and the same query as hand-written ClickHouse
 * SQL (`clickhouse-baseline.ts`), in process (`chdb`) and over HTTP on the ClickHouse the engine
 * is served from. Then load throughput: `engine load`, the floor's `read_ndjson` and
 * ClickHouse's `INSERT … FROM file` of the same file (medians of L interleaved rounds, by
 * default 3 up to 2M events and 1 above), and on the ClickHouse served over HTTP `engine load
 * --clickhouse` against the same INSERT sent over HTTP (file to queryable, L rounds), `/api/bulk-log` in batches of 1,000 over eight
 * connections on both drivers, also into collections that have seen 10, 300 and 3,000 other keys
 * and with rollups by two keys on against off (on each driver), and the serving process's memory. It ends with the targets, each met or not.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  fsyncSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { Agent, request } from 'node:http';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { demoEventObjects, demoEvents } from '@analytics-chart/engine';
// The engine's own DuckDB build, loaded as the engine loads it, for the floor and the baseline.
import {
  DuckDBInstance,
  offsetSegments,
  quotedString,
  STORAGE_VERSION,
} from '@analytics-chart/engine/internals';
import { shiftBack } from '@analytics-chart/protocol';
import { median } from '../stats.ts';
import { listening } from './child-url.ts';
import {
  CLICKHOUSE_SQL,
  CLICKHOUSE_TABLE,
  clickHouseInsert,
  openClickHouseBaseline,
} from './clickhouse-baseline.ts';
import { COUNT_PER_DAY_30_DAYS, COUNT_PER_HOUR_BY_EVENT_3_DAYS } from './dashboard-requests.ts';
import { type IngestBuild, measureRollupIngest, ROUND_EVENTS } from './rollup-ingest.ts';
import { runScale, SCALE_FROM } from './scale.ts';
import { runWideEvents } from './wide-events.ts';

/**
 * The CLI as the installed package runs it: its published bin, the compiled `dist/` that `pnpm
 * bench` builds first. The workspace's own bin compiles the TypeScript sources at every start,
 * which `engine load` would pay in its time (about 0.8 s of start-up here, measured).
 */
const ENGINE_BIN = (() => {
  const manifest = createRequire(import.meta.url).resolve('@analytics-chart/engine/package.json');
  const { publishConfig } = JSON.parse(readFileSync(manifest, 'utf8')) as {
    publishConfig: { bin: Record<string, string> };
  };
  return join(dirname(manifest), publishConfig.bin['analytics-engine'] as string);
})();
const FLOOR_SERVER = new URL('./floor-server.ts', import.meta.url).pathname;
const CLICKHOUSE_SERVER = new URL('./clickhouse-server.ts', import.meta.url).pathname;
const KEY = 'bench-key';
const EVENT_CODES = ['page_view', 'login', 'feature_used', 'signup', 'purchase', 'error'];

/** Which storage drivers of the engine are measured. */
type Driver = 'all' | 'duckdb' | 'clickhouse';

interface Options {
  events: number;
  driver: Driver;
  runs: number;
  /** Interleaved rounds of the two loads (default 3 up to 2M events, else 1). */
  loadRuns: number;
  /** Stop after the DuckDB load rounds (engine load, read_ndjson, chdb's INSERT) and print them. */
  loadOnly: boolean;
  /** Skip the queries; print the first /api/bulk-log figures and stop. */
  bulkOnly: boolean;
  /** Load ClickHouse once, then time only the engine on it against the hand-written statements. */
  chQueriesOnly: boolean;
  /** With {@link chQueriesOnly}: another build's engine bin, served and timed beside this one. */
  chOtherEngine?: string;
  /** With {@link chQueriesOnly}: the engine on a workspace keeping rollups, timed beside. */
  chRollups: boolean;
  /** The keys of a second engine workspace on ClickHouse that types those keys only. */
  chKeyColumns?: string;
  keep: boolean;
}

/** The argument after `name`, or an empty string. */
const argAfter = (args: string[], name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? String(args[at + 1] ?? '') : '';
};

/** `1000000`, `1_000_000`, `1M`, `10M`, `300k`. */
function eventCount(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(text.replaceAll('_', ''));
  if (!m) return Number.NaN;
  const unit = { k: 1e3, K: 1e3, m: 1e6, M: 1e6 }[m[2] as string] ?? 1;
  return Math.round(Number(m[1]) * unit);
}

function parseOptions(args: string[]): Options {
  const options: Options = {
    events: 1_000_000,
    driver: 'all',
    runs: 15,
    loadRuns: 0,
    keep: false,
    loadOnly: false,
    bulkOnly: false,
    chQueriesOnly: false,
    chRollups: false,
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--events') options.events = eventCount(String(args[++i]));
    else if (arg === '--driver') {
      const driver = args[++i];
      if (driver !== 'all' && driver !== 'duckdb' && driver !== 'clickhouse') {
        throw new Error('bench engine: --driver is duckdb, clickhouse or all');
      }
      options.driver = driver;
    } else if (arg === '--runs') options.runs = Number(args[++i]);
    else if (arg === '--load-runs') options.loadRuns = Number(args[++i]);
    else if (arg === '--keep') options.keep = true;
    else if (arg === '--load-only') options.loadOnly = true;
    else if (arg === '--bulk-only') options.bulkOnly = true;
    else if (arg === '--ch-queries-only') options.chQueriesOnly = true;
    else if (arg === '--ch-rollups') options.chRollups = true;
    else if (arg === '--ch-key-columns') options.chKeyColumns = String(args[++i]);
    else if (arg === '--ch-other-engine') {
      // Relative to where `pnpm bench` was typed, not to bench/, where pnpm runs it.
      options.chOtherEngine = resolve(process.env.INIT_CWD ?? process.cwd(), String(args[++i]));
    } else throw new Error(`bench engine: unknown option ${arg}`);
  }
  if (!Number.isSafeInteger(options.events) || options.events < 1000) {
    throw new Error('bench engine: --events must be a whole number of at least 1000');
  }
  if (options.chQueriesOnly) {
    options.driver = 'clickhouse';
    options.loadRuns ||= 1;
  }
  if ((options.chOtherEngine !== undefined || options.chRollups) && !options.chQueriesOnly) {
    throw new Error('bench engine: --ch-other-engine and --ch-rollups go with --ch-queries-only');
  }
  options.loadRuns ||= options.events <= 2_000_000 ? 3 : 1;
  if (!Number.isSafeInteger(options.loadRuns) || options.loadRuns < 1) {
    throw new Error('bench engine: --load-runs must be a whole number of at least 1');
  }
  return options;
}

/** The events in memory for the JavaScript baseline, column by column. */
interface Columns {
  ts: Float64Array;
  event: Uint8Array;
  price: Float64Array;
}

const ms = (start: number) => performance.now() - start;
const fmt = (n: number, digits = 1) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const rate = (events: number, millis: number) => Math.round((events / millis) * 1000);

function log(line: string) {
  process.stdout.write(`${line}\n`);
}

/** Writes the NDJSON file and fills the in-memory columns from the same generator. */
function generate(file: string, count: number, now: number): Columns {
  const columns: Columns = {
    ts: new Float64Array(count),
    event: new Uint8Array(count),
    price: new Float64Array(count).fill(Number.NaN),
  };
  const fd = openSync(file, 'w');
  let buffer: string[] = [];
  let i = 0;
  for (const { timestamp, json } of demoEventObjects(count, 42, now)) {
    columns.ts[i] = timestamp;
    columns.event[i] = EVENT_CODES.indexOf(json.event);
    if (json.price !== undefined) columns.price[i] = json.price;
    buffer.push(`{"timestamp":${timestamp},"json":${JSON.stringify(json)}}`);
    if (buffer.length === 20_000) {
      writeSync(fd, `${buffer.join('\n')}\n`);
      buffer = [];
    }
    i++;
  }
  if (buffer.length) writeSync(fd, `${buffer.join('\n')}\n`);
  // On disk before anything is timed: otherwise the kernel writes the file's pages back (200 MB
  // at 1M events, 2 GB at 10M) while the loads and queries run, about 30 s after they were written.
  fsyncSync(fd);
  closeSync(fd);
  return columns;
}

/** Seconds of a `process.cpuUsage` difference. */
function cpuSeconds(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1e6;
}

/** CPU seconds a running process has used so far (all its threads); NaN where unknown. */
function processCpu(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU seconds of this process's children that have exited, from `/proc/self/stat` (its
 * `cutime` and `cstime`, in the kernel's fixed 100 ticks a second); NaN where there is none.
 */
function exitedChildrenCpu(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return Number.NaN;
  }
}

function runChild(
  args: string[],
  env: Record<string, string> = {},
  bin = ENGINE_BIN,
): ChildProcess {
  const childEnv: Record<string, string | undefined> = { ...process.env, ...env };
  delete childEnv.INIT_CWD;
  return spawn(process.execPath, [bin, ...args], {
    env: childEnv,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/**
 * Warm-up of each query, on each side, before its measured runs: at least this many runs and at
 * least {@link WARM_UP_MS} of them. The serving process starts cold, unlike the floor, whose
 * DuckDB just wrote the table and holds it in its buffer pool: the engine's first runs of a
 * query read its columns' blocks from the file, and its request path (validation, windows,
 * bucket plan, shaping, the HTTP server) runs unoptimised until V8 has seen it a few hundred
 * times. Measured at 1M events, the hourly split over HTTP took 4.5 ms in its first 200
 * requests, 3.7 ms in the next 200 and 2.8-2.9 ms from about the 400th on; at 10M it settled
 * after about ten runs (16-19 ms, then 10-11 ms), which a count of runs alone covered. A server
 * answers its millionth request, not its tenth: the figure is the steady state. Every side gets
 * the same warm-up.
 */
const WARM_UP_RUNS = 10;
/** Least time spent warming each query on each side (see {@link WARM_UP_RUNS}). */
const WARM_UP_MS = 2_000;
/**
 * Least time spent measuring each query on each side, beside the `--runs` count: at 1M events a
 * query takes 1-5 ms, and fifteen runs were 50 ms of the machine's time, which one burst of
 * another process's work could shift (the hourly split read 1.15, 1.85 and 1.96 of its floor in
 * three runs of the same code). A second of runs gives the median a few hundred samples.
 */
const MEASURE_MS = 1_000;
/** Turns each side's measurement of a query is split into (see `measure` in {@link run}). */
const ROUNDS = 5;
/** Unmeasured runs at the start of each turn. */
const SETTLE_RUNS = 2;
/** A side whose run takes longer is warmed with two runs and timed once a turn. */
const SLOW_RUN_MS = 1_000;

/** Connections posting to /api/bulk-log at once (the target allows 4 to 8). */
const BULK_CONNECTIONS = 8;
/** Keys a collection has seen before the keyed bulk-ingest measurement. */
const KEY_COUNTS = [10, 300, 3000];
/** Batches of 1,000 sent to /api/bulk-log before its clock starts. */
const BULK_WARM_UP = 20;

/**
 * The ruling on the engine's ClickHouse queries, restated as added time: at most 1.3x **or** at
 * most 5 ms more than the hand-written statement over HTTP.
 */
function withinRuling(engineMs: number, handMs: number): boolean {
  return engineMs / handMs <= 1.3 || engineMs - handMs <= 5;
}

/**
 * POSTs a serialised body over a keep-alive agent and resolves with the response text; anything
 * but a 200 is an error. `node:http` rather than `fetch`: the client shares the two cores with
 * the server, and `fetch` costs it about 1.5 ms more per request (measured), which would be
 * counted against the engine.
 */
function postRaw(agent: Agent, url: string, body: string, retry = true): Promise<string> {
  const { hostname, port, pathname, search } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: hostname,
        port,
        path: `${pathname}${search}`,
        method: 'POST',
        agent,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(text)
            : reject(new Error(`${pathname}: ${res.statusCode} ${text}`)),
        );
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      // A kept-alive socket that the server closed while it sat idle (Node's keep-alive timeout
      // is 5 s; the JS loop over 10M events takes longer) fails at its next use, before the
      // server has read anything: Node's documented remedy is to send once more on a new socket.
      if (retry && req.reusedSocket && error.code === 'ECONNRESET') {
        resolve(postRaw(agent, url, body, false));
      } else reject(error);
    });
    req.end(body);
  });
}

function finished(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') * 1024, peak: kb('VmHWM') * 1024 };
}

interface QueryCase {
  name: string;
  body: Record<string, unknown>;
  floor: (params: { lo: number; hi: number }) => string;
  js: (c: Columns, params: { lo: number; hi: number }) => unknown;
  window: number;
}

/** The ClickHouse database the hand-written statements' table lives in, over HTTP. */
const HAND_WRITTEN_DB = 'bench';
/**
 * The engine's own ClickHouse database and event table for workspace `default` (the storage
 * model in the engine README's *ClickHouse*). `/api/bulk-log` takes one timestamp per request, so
 * the benchmark fills the engine's table through ClickHouse itself, as an import would: an
 * INSERT naming the table's columns, which fails loudly if the storage model changes.
 */
const ENGINE_DB = 'analytics_default';
const ENGINE_EVENTS = '_engine_events';
/** With `--ch-rollups`: the workspace keeping rollups, its database, and what it keeps. */
const ROLLED = 'rolled';
const ROLLED_DB = `analytics_${ROLLED}`;
const ROLLED_KEY = 'bench-rolled-key';
/** The workspace of `--ch-key-columns`, served with the benchmark's key by engines of its own. */
const NARROW = 'narrow';
const NARROW_DB = `analytics_${NARROW}`;
const ROLLUP_FLAGS = ['--rollup-keys', 'event,plan', '--rollup-sums', 'price'];

/** Numbers equal to nine significant digits (sums in another order), anything else exactly. */
function sameAnswer(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') {
    return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => sameAnswer(v, b[i]));
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return (
      sameAnswer(ka, kb) &&
      ka.every((k) =>
        sameAnswer((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
      )
    );
  }
  return a === b;
}

/** A child process running a TypeScript server of this directory under tsx. */
function tsxChild(script: string, arg: string): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', script, arg], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** One driver's rollup ingest figures in the full run. */
type RollupIngestFigures = { off: number; on: number; ratio: number; events: number };

/** The tools {@link measureRollupIngest} borrows: children and requests as the rest use them. */
const rollupIngestTools = {
  engine: runChild,
  listening,
  post: (agent: Agent, url: string, body: string) => postRaw(agent, url, body),
  cpu: processCpu,
};

/** `--rollup-ingest-only [--rounds R] [--other-engine BIN]`: that comparison alone, printed. */
async function runRollupIngestOnly(args: string[]): Promise<void> {
  const known = new Set(['--rollup-ingest-only', '--rounds', '--other-engine', '--driver']);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!known.has(arg))
      throw new Error(`bench engine: ${arg} does not go with --rollup-ingest-only`);
    if (arg !== '--rollup-ingest-only') i++;
  }
  const driver = args.includes('--driver') ? argAfter(args, '--driver') : 'duckdb';
  if (driver !== 'duckdb' && driver !== 'clickhouse') {
    throw new Error('bench engine: --rollup-ingest-only measures duckdb or clickhouse');
  }
  const rounds = args.includes('--rounds') ? Number(argAfter(args, '--rounds')) : 20;
  if (!Number.isSafeInteger(rounds) || rounds < 1) {
    throw new Error('bench engine: --rounds must be a whole number of at least 1');
  }
  const builds: IngestBuild[] = [{ name: 'this build' }];
  if (args.includes('--other-engine')) {
    // Relative to where `pnpm bench` was typed, not to bench/, where pnpm runs it.
    const bin = resolve(process.env.INIT_CWD ?? process.cwd(), argAfter(args, '--other-engine'));
    builds.push({ name: `other build (${bin})`, bin });
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-rollup-ingest-'));
  log(
    `rollup ingest (${driver === 'clickhouse' ? 'ClickHouse, chdb behind its HTTP interface' : 'DuckDB'}): ${rounds} rounds of ${ROUND_EVENTS.toLocaleString('en-US')} events per side, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, load average before: ${loadavg()
      .map((l) => fmt(l, 2))
      .join(', ')}`,
  );
  const chServer = driver === 'clickhouse' ? tsxChild(CLICKHOUSE_SERVER, join(dir, 'ch')) : null;
  try {
    const clickhouse = chServer
      ? { url: await listening(chServer), pid: chServer.pid as number }
      : undefined;
    const measured = await measureRollupIngest(rollupIngestTools, {
      dir,
      builds,
      rounds,
      now: Math.floor(Date.now() / 1000),
      ...(clickhouse ? { clickhouse } : {}),
    });
    for (const b of measured.builds) {
      log(
        `${b.name}: off ${b.off.toLocaleString('en-US')} events/s (${fmt(b.offCpu, 2)} µs CPU/event), on ${b.on.toLocaleString('en-US')} events/s (${fmt(b.onCpu, 2)} µs CPU/event); on/off ${fmt(b.ratio, 2)}x (median of the rounds' ratios; ratio of the medians ${fmt(b.on / b.off, 2)}x; CPU per event off/on ${fmt(b.offCpu / b.onCpu, 2)}x)`,
      );
    }
    log(
      `load average after: ${loadavg()
        .map((l) => fmt(l, 2))
        .join(', ')}`,
    );
  } finally {
    if (chServer) {
      chServer.kill('SIGTERM');
      await finished(chServer);
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(args: string[]): Promise<void> {
  if (args.includes('--wide')) {
    const driverAt = args.indexOf('--driver');
    const driver = (driverAt >= 0 ? args[driverAt + 1] : 'all') as 'all' | 'duckdb' | 'clickhouse';
    const dir = mkdtempSync(join(tmpdir(), 'bench-wide-'));
    log(
      `wide events: driver ${driver}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, load average before: ${loadavg()
        .map((l) => fmt(l, 2))
        .join(', ')}`,
    );
    try {
      await runWideEvents(driver, dir, {
        engine: runChild,
        clickHouse: (path) => tsxChild(CLICKHOUSE_SERVER, path),
        listening,
        log,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return;
  }
  if (args.includes('--rollup-ingest-only')) {
    await runRollupIngestOnly(args);
    return;
  }
  if (args.includes('--scale') || eventCount(argAfter(args, '--events')) >= SCALE_FROM) {
    await runScale(eventCount(argAfter(args, '--events') || '100M'), {
      engine: runChild,
      listening,
      post: (agent, url, body) => postRaw(agent, url, body),
      log,
      keep: args.includes('--keep'),
    });
    return;
  }
  const options = parseOptions(args);
  const withDuckDb = options.driver !== 'clickhouse';
  const withClickHouse = options.driver !== 'duckdb';
  const dir = mkdtempSync(join(tmpdir(), 'bench-engine-'));
  const file = join(dir, 'events.ndjson');
  const now = Math.floor(Date.now() / 1000);
  const started = new Date();
  log(
    `engine benchmark: ${options.events.toLocaleString('en-US')} events, driver ${options.driver}, at least ${options.runs} runs and ${MEASURE_MS / 1000} s per query and side (after a warm-up of ${WARM_UP_RUNS} runs and ${WARM_UP_MS / 1000} s), ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fmt(totalmem() / 2 ** 30, 0)} GiB RAM, Node ${process.version}`,
  );
  log(
    `data directory ${dir}; load average before: ${loadavg()
      .map((l) => fmt(l, 2))
      .join(', ')}`,
  );

  let t = performance.now();
  const columns = generate(file, options.events, now);
  log(`generated ${fmt(statSync(file).size / 1e6)} MB of NDJSON in ${fmt(ms(t) / 1000)} s`);

  // The floor's loader (DuckDB's read_ndjson into flat typed columns), engine load as users run
  // it and ClickHouse's INSERT from the same file, in interleaved rounds: the machine's speed
  // drifts from minute to minute, and the medians of rounds taken side by side compare like with
  // like. The last round's tables stay for the queries.
  const chdb = options.chQueriesOnly ? undefined : await openClickHouseBaseline(dir);
  const floorLoadTimes: number[] = [];
  const loadTimes: number[] = [];
  const chdbLoadTimes: number[] = [];
  // CPU seconds of each load (all its threads), which a shared machine distorts far less than
  // the wall time: the work each side does.
  const floorLoadCpu: number[] = [];
  const loadCpu: number[] = [];
  const chdbLoadCpu: number[] = [];
  let floorDb: DuckDBInstance | undefined;
  let floor: Awaited<ReturnType<DuckDBInstance['connect']>> | undefined;
  const data = join(dir, 'data');
  for (let round = 1; round <= options.loadRuns; round++) {
    const parts: string[] = [];
    if (withDuckDb) {
      floor?.closeSync();
      floorDb?.closeSync();
      rmSync(join(dir, 'floor.duckdb'), { force: true });
      rmSync(data, { recursive: true, force: true });
      // The fastest layout DuckDB offers these queries: one flat table with typed top-level
      // columns for what they read and the payload text beside them, zstd-compressed as the
      // engine keeps it, in the engine's storage format.
      floorDb = await DuckDBInstance.create(join(dir, 'floor.duckdb'), {
        threads: '2',
        memory_limit: '1GB',
        storage_compatibility_version: STORAGE_VERSION,
      });
      floor = await floorDb.connect();
      await floor.run(
        'CREATE TABLE t (timestamp BIGINT, event VARCHAR, price DOUBLE, json VARCHAR USING COMPRESSION zstd)',
      );
      t = performance.now();
      const cpu = process.cpuUsage();
      await floor.run(`INSERT INTO t
        SELECT timestamp, json->>'event', TRY_CAST(json->>'price' AS DOUBLE), json
        FROM read_ndjson(${quotedString(file)}, columns = {timestamp: 'BIGINT', json: 'JSON'})`);
      await floor.run('CHECKPOINT');
      const floorRound = ms(t);
      floorLoadTimes.push(floorRound);
      floorLoadCpu.push(cpuSeconds(process.cpuUsage(cpu)));

      t = performance.now();
      const childCpu = exitedChildrenCpu();
      const load = runChild(['load', '--data', data, file]);
      load.stdout?.on('data', () => undefined);
      if ((await finished(load)) !== 0) throw new Error('engine load failed');
      const loadRound = ms(t);
      loadTimes.push(loadRound);
      loadCpu.push(exitedChildrenCpu() - childCpu);
      parts.push(
        `read_ndjson into flat DuckDB columns ${fmt(floorRound / 1000)} s`,
        `engine load ${fmt(loadRound / 1000)} s`,
      );
    }
    if (chdb) {
      const cpu = process.cpuUsage();
      const chdbRound = (await chdb.load(file)) * 1000;
      chdbLoadCpu.push(cpuSeconds(process.cpuUsage(cpu)));
      chdbLoadTimes.push(chdbRound);
      parts.push(`ClickHouse INSERT (chdb) ${fmt(chdbRound / 1000)} s`);
    }
    log(`load round ${round}/${options.loadRuns}: ${parts.join(', ') || 'nothing to load'}`);
  }
  if (withDuckDb && !floor) throw new Error('bench engine: no load round ran');
  if (!chdb && !options.chQueriesOnly) {
    log('ClickHouse (chdb) has no library for this platform: its columns are left out');
  }
  const floorLoadMs = median(floorLoadTimes);
  const loadMs = median(loadTimes);
  const chdbLoadMs = median(chdbLoadTimes);
  if (options.loadOnly) {
    // Load figures alone, for work on the loader: minutes instead of the whole run.
    log(
      `load only: engine load ${fmt(loadMs / 1000)} s = ${fmt(chdbLoadMs / loadMs, 2)}× ClickHouse INSERT (chdb, ${fmt(chdbLoadMs / 1000)} s), ${fmt(floorLoadMs / loadMs, 2)}× read_ndjson (${fmt(floorLoadMs / 1000)} s); CPU: engine load ${fmt(median(loadCpu))} s, chdb ${fmt(median(chdbLoadCpu))} s, read_ndjson ${fmt(median(floorLoadCpu))} s`,
    );
    floor?.closeSync();
    floorDb?.closeSync();
    chdb?.close();
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
    return;
  }

  // Whatever ends this process (a failed request throws), the servers must not outlive it: a
  // stray one keeps the data directory locked and takes CPU from the next run's measurements.
  const children: ChildProcess[] = [];
  const stopServers = () => {
    for (const child of children) child.kill('SIGTERM');
  };
  process.once('exit', stopServers);
  let server: ChildProcess | undefined;
  let url = '';
  let floorUrl = '';
  if (withDuckDb) {
    server = runChild(['serve', '--port', '0', '--data', data], { ANALYTICS_API_KEY: KEY });
    // The floor's statement behind a bare server, on a copy of its table (a DuckDB file is open
    // in one process at a time; the copy is taken after the CHECKPOINT, so it is whole).
    const floorCopy = join(dir, 'floor-http.duckdb');
    copyFileSync(join(dir, 'floor.duckdb'), floorCopy);
    const floorServer = tsxChild(FLOOR_SERVER, floorCopy);
    children.push(server, floorServer);
    [url, floorUrl] = await Promise.all([listening(server), listening(floorServer)]);
  }
  // ClickHouse over HTTP (chdb behind ClickHouse's HTTP interface, a process of its own), the
  // engine served on it, the hand-written statements' table loaded in it, and the engine's table
  // filled from the same file.
  let chUrl = '';
  let chServerPid = 0;
  let chEngineUrl = '';
  let chOtherUrl = '';
  let chRolledUrl = '';
  let chNarrowUrl = '';
  const narrowFlags = options.chKeyColumns
    ? ['--clickhouse-key-columns', options.chKeyColumns]
    : [];
  const chHttpLoadTimes: number[] = [];
  /** The process serving each engine URL on ClickHouse, whose CPU bulk-log counts. */
  const chServePids = new Map<string, number>();
  const chEngineLoadTimes: number[] = [];
  const chNarrowLoadTimes: number[] = [];
  const chEngineLoadCpu: number[] = [];
  const chServerCpu: { http: number[]; engine: number[] } = { http: [], engine: [] };
  let chSettledMs = Number.NaN;
  const chAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const postCh = (sql: string, database: string) =>
    postRaw(chAgent, `${chUrl}/?database=${encodeURIComponent(database)}`, sql);
  if (withClickHouse) {
    const chServer = tsxChild(CLICKHOUSE_SERVER, join(dir, 'clickhouse-http'));
    children.push(chServer);
    chServerPid = chServer.pid as number;
    chUrl = await listening(chServer);
    const chEnv = { CLICKHOUSE_USER: 'default', CLICKHOUSE_PASSWORD: '' };
    // The hand-written table's INSERT … FROM file and OPTIMIZE over HTTP, and `engine load
    // --clickhouse` of the same file into the engine's table, file to queryable (its form
    // columns and the sort projection written by its inserts), in interleaved rounds on the
    // same ClickHouse; CPU of the load's process and of the ClickHouse server's, apart.
    await postCh(`CREATE DATABASE IF NOT EXISTS ${HAND_WRITTEN_DB}`, 'default');
    for (let round = 1; round <= options.loadRuns; round++) {
      await postCh('DROP TABLE IF EXISTS events SYNC', HAND_WRITTEN_DB);
      await postCh(CLICKHOUSE_TABLE, HAND_WRITTEN_DB);
      let serverCpu = processCpu(chServer.pid as number);
      t = performance.now();
      await postCh(clickHouseInsert(file), HAND_WRITTEN_DB);
      await postCh('OPTIMIZE TABLE events FINAL', HAND_WRITTEN_DB);
      const httpRound = ms(t);
      chHttpLoadTimes.push(httpRound);
      chServerCpu.http.push(processCpu(chServer.pid as number) - serverCpu);
      await postCh(`DROP DATABASE IF EXISTS ${ENGINE_DB} SYNC`, 'default');
      serverCpu = processCpu(chServer.pid as number);
      const childCpu = exitedChildrenCpu();
      t = performance.now();
      const load = runChild(
        ['load', '--clickhouse', chUrl, '--clickhouse-sort-field', 'event', file],
        chEnv,
      );
      load.stdout?.on('data', () => undefined);
      if ((await finished(load)) !== 0) throw new Error('engine load --clickhouse failed');
      const engineRound = ms(t);
      chEngineLoadTimes.push(engineRound);
      chEngineLoadCpu.push(exitedChildrenCpu() - childCpu);
      chServerCpu.engine.push(processCpu(chServer.pid as number) - serverCpu);
      let narrowRound = '';
      if (options.chKeyColumns) {
        await postCh(`DROP DATABASE IF EXISTS ${NARROW_DB} SYNC`, 'default');
        t = performance.now();
        const args = ['load', '--clickhouse', chUrl, '--clickhouse-sort-field', 'event'];
        const narrow = runChild([...args, '--workspace', NARROW, ...narrowFlags, file], chEnv);
        narrow.stdout?.on('data', () => undefined);
        if ((await finished(narrow)) !== 0) throw new Error('engine load --clickhouse failed');
        chNarrowLoadTimes.push(ms(t));
        narrowRound = `, with ${narrowFlags.join(' ')} ${fmt(ms(t) / 1000)} s`;
      }
      log(
        `ClickHouse load round ${round}/${options.loadRuns}: INSERT over HTTP (with OPTIMIZE FINAL) ${fmt(httpRound / 1000)} s, engine load --clickhouse ${fmt(engineRound / 1000)} s${narrowRound}`,
      );
    }
    if (options.chRollups) {
      // The same file into a workspace of its own that keeps rollups, its view filling them
      // from the load's inserts.
      await postCh(`DROP DATABASE IF EXISTS ${ROLLED_DB} SYNC`, 'default');
      t = performance.now();
      const load = runChild(
        [
          'load',
          '--clickhouse',
          chUrl,
          '--clickhouse-sort-field',
          'event',
          '--workspace',
          ROLLED,
          ...ROLLUP_FLAGS,
          file,
        ],
        chEnv,
      );
      load.stdout?.on('data', () => undefined);
      if ((await finished(load)) !== 0)
        throw new Error('engine load --clickhouse with rollups failed');
      log(
        `engine load --clickhouse with rollups (${ROLLUP_FLAGS.join(' ')}) ${fmt(ms(t) / 1000)} s`,
      );
    }
    // Nothing should be left for ClickHouse to do: the wire server answers one query at a time,
    // so a poll queued behind a mutation or merge returns only once it is done, and ClickHouse
    // is idle once five polls in a row find nothing pending and are answered at once.
    t = performance.now();
    const busy =
      'SELECT (SELECT count() FROM system.mutations WHERE NOT is_done) + (SELECT count() FROM system.merges)';
    const settled = async () => {
      for (let quiet = 0; quiet < 5; ) {
        const asked = performance.now();
        const pending = (await postCh(busy, ENGINE_DB)).trim();
        quiet = pending === '0' && performance.now() - asked < 100 ? quiet + 1 : 0;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    await settled();
    chSettledMs = ms(t);
    // Merged into one part for the queries, as the hand-written table and the in-process one
    // are (not part of the load's time: its parts are queryable as they are).
    await postCh(`OPTIMIZE TABLE ${ENGINE_EVENTS} FINAL`, ENGINE_DB);
    if (options.chKeyColumns) await postCh(`OPTIMIZE TABLE ${ENGINE_EVENTS} FINAL`, NARROW_DB);
    if (options.chRollups) {
      await postCh(`OPTIMIZE TABLE ${ENGINE_EVENTS} FINAL`, ROLLED_DB);
      await postCh('OPTIMIZE TABLE _engine_rollup_15m FINAL', ROLLED_DB);
    }
    const serveCh = (bin?: string, flags: string[] = []) =>
      runChild(
        [
          'serve',
          '--port',
          '0',
          '--data',
          join(dir, 'unused'),
          '--clickhouse',
          chUrl,
          '--clickhouse-sort-field',
          'event',
          ...flags,
        ],
        { ANALYTICS_API_KEY: KEY, ...chEnv },
        bin,
      );
    const chEngine = serveCh();
    children.push(chEngine);
    chEngineUrl = await listening(chEngine);
    chServePids.set(chEngineUrl, chEngine.pid as number);
    // An engine's opening may leave a mutation running (its form columns and sort projection
    // materialized), which the one-query-at-a-time server would put before the next engine's
    // opening queries, past their time limit, and before the measured queries.
    await settled();
    if (options.chOtherEngine !== undefined) {
      const other = serveCh(options.chOtherEngine);
      children.push(other);
      chOtherUrl = await listening(other);
      await settled();
    }
    /** An engine of its own serving only `workspace`, so the one on `default` is left as it is. */
    const serveAlone = async (workspace: string, key: string, flags: string[]) => {
      const workspaces = join(dir, `${workspace}-workspaces.json`);
      writeFileSync(workspaces, JSON.stringify({ [workspace]: key }));
      const engine = serveCh(undefined, ['--workspaces', workspaces, ...flags]);
      children.push(engine);
      const served = await listening(engine);
      chServePids.set(served, engine.pid as number);
      await settled();
      return served;
    };
    if (options.chKeyColumns) chNarrowUrl = await serveAlone(NARROW, KEY, narrowFlags);
    if (options.chRollups) chRolledUrl = await serveAlone(ROLLED, ROLLED_KEY, ROLLUP_FLAGS);
    log(
      `after the last engine load, ClickHouse was idle (no mutation or merge) within ${fmt(chSettledMs / 1000)} s`,
    );
  }
  const queryAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const post = (path: string, body: unknown) =>
    postRaw(queryAgent, `${url}${path}`, JSON.stringify(body));
  const floorAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const postFloor = (sql: string) => postRaw(floorAgent, floorUrl, JSON.stringify({ sql }));
  const chEngineAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const postChEngine = (path: string, body: unknown) =>
    postRaw(chEngineAgent, `${chEngineUrl}${path}`, JSON.stringify(body));
  const chRolledAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const postChRolled = (body: Record<string, unknown>) =>
    postRaw(
      chRolledAgent,
      `${chRolledUrl}/api/visualize/data`,
      JSON.stringify({ ...body, api_key: ROLLED_KEY }),
    );
  const chNarrowAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const postChNarrow = (body: unknown) =>
    postRaw(chNarrowAgent, `${chNarrowUrl}/api/visualize/data`, JSON.stringify(body));
  const chOtherAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const postChOther = (path: string, body: unknown) =>
    postRaw(chOtherAgent, `${chOtherUrl}${path}`, JSON.stringify(body));

  const DAY = 86_400;
  const la = (lo: number, hi: number) => offsetSegments('America/Los_Angeles', lo, hi);
  const offsetCase = (lo: number, hi: number) => {
    const segments = la(lo, hi);
    if (segments.length === 1) return String(segments[0]?.offset);
    const branches = segments
      .slice(1)
      .map((s, i) => `WHEN timestamp < ${s.from} THEN ${segments[i]?.offset}`);
    return `CASE ${branches.join(' ')} ELSE ${segments[segments.length - 1]?.offset} END`;
  };
  const cases: QueryCase[] = [
    {
      ...COUNT_PER_DAY_30_DAYS,
      window: 30 * DAY,
      floor: ({ lo, hi }) =>
        `SELECT (timestamp + ${offsetCase(lo, hi)}) // 86400 AS d, count(*) FROM t WHERE timestamp BETWEEN ${lo} AND ${hi} GROUP BY d`,
      js: (c, { lo, hi }) => {
        const segments = la(lo, hi);
        const counts = new Map<number, number>();
        for (let i = 0; i < c.ts.length; i++) {
          const ts = c.ts[i] as number;
          if (ts < lo || ts > hi) continue;
          let offset = segments[0]?.offset ?? 0;
          for (const s of segments) if (s.from <= ts) offset = s.offset;
          const day = Math.floor((ts + offset) / DAY);
          counts.set(day, (counts.get(day) ?? 0) + 1);
        }
        return counts;
      },
    },
    {
      ...COUNT_PER_HOUR_BY_EVENT_3_DAYS,
      window: 3 * DAY,
      floor: ({ lo, hi }) =>
        `SELECT event, timestamp // 3600 AS h, count(*) FROM t WHERE timestamp BETWEEN ${lo} AND ${hi} GROUP BY ALL`,
      js: (c, { lo, hi }) => {
        const counts = new Map<number, number>();
        for (let i = 0; i < c.ts.length; i++) {
          const ts = c.ts[i] as number;
          if (ts < lo || ts > hi) continue;
          const key = Math.floor(ts / 3600) * 8 + (c.event[i] as number);
          counts.set(key, (counts.get(key) ?? 0) + 1);
        }
        return counts;
      },
    },
    {
      name: 'Sum(price) where event = purchase, 90 days',
      window: 90 * DAY,
      body: {
        graph_type: 'Single Value',
        aggregation: 'Sum',
        metric: 'price',
        filters: [['event', '=', 'purchase']],
        start: '90 days ago',
        end: 'now',
        IANA_time_zone: 'America/Los_Angeles',
      },
      floor: ({ lo, hi }) =>
        `SELECT sum(price) FROM t WHERE timestamp BETWEEN ${lo} AND ${hi} AND event = 'purchase'`,
      js: (c, { lo, hi }) => {
        const purchase = EVENT_CODES.indexOf('purchase');
        let sum = 0;
        for (let i = 0; i < c.ts.length; i++) {
          const ts = c.ts[i] as number;
          if (ts >= lo && ts <= hi && c.event[i] === purchase) sum += c.price[i] as number;
        }
        return sum;
      },
    },
    {
      name: 'P95(price), 90 days',
      window: 90 * DAY,
      body: {
        graph_type: 'Single Value',
        aggregation: 'P95',
        metric: 'price',
        start: '90 days ago',
        end: 'now',
        IANA_time_zone: 'America/Los_Angeles',
      },
      floor: ({ lo, hi }) =>
        `SELECT quantile_cont(price, 0.95) FROM t WHERE timestamp BETWEEN ${lo} AND ${hi}`,
      js: (c, { lo, hi }) => {
        const values: number[] = [];
        for (let i = 0; i < c.ts.length; i++) {
          const ts = c.ts[i] as number;
          const price = c.price[i] as number;
          if (ts >= lo && ts <= hi && !Number.isNaN(price)) values.push(price);
        }
        const sorted = Float64Array.from(values).sort();
        const h = (sorted.length - 1) * 0.95;
        const low = Math.floor(h);
        return (sorted[low] ?? 0) + (h - low) * ((sorted[Math.ceil(h)] ?? 0) - (sorted[low] ?? 0));
      },
    },
    {
      name: 'Latest 50 Samples',
      window: 90 * DAY,
      body: {
        graph_type: 'Samples',
        start: '90 days ago',
        end: 'now',
        IANA_time_zone: 'America/Los_Angeles',
      },
      floor: ({ lo, hi }) =>
        `SELECT timestamp, json FROM t WHERE timestamp BETWEEN ${lo} AND ${hi} ORDER BY timestamp DESC LIMIT 50`,
      js: (c, { lo, hi }) => {
        // The columns are in time order, as the file is: scan back from the end.
        const out: number[] = [];
        for (let i = c.ts.length - 1; i >= 0 && out.length < 50; i--) {
          const ts = c.ts[i] as number;
          if (ts >= lo && ts <= hi) out.push(i);
        }
        return out;
      },
    },
  ];

  type Row = Measured['rows'][number];
  const rows: Row[] = [];
  let peakRss = 0;
  // Each side is warmed up in a block of its own, then measured in turns: ROUNDS rounds in each
  // of which every side runs SETTLE_RUNS unmeasured times, then is timed for its share of the
  // runs and the measuring time. In turns, because on a machine shared with other work a burst
  // of it would otherwise fall on one side's whole block and skew that side's ratios; the
  // unmeasured runs absorb what the side before leaves behind (a JS loop over 10M events leaves
  // garbage-collector threads running, DuckDB's threads keep spinning a moment after a query).
  // The engine's window: `N days ago` is N calendar days back in the query's zone (across a
  // change of clocks, an hour more or less than N × 86,400 s), both ends exclusive.
  const windowNow = (c: QueryCase) => {
    const nowSec = Date.now() / 1000;
    const zone = String(c.body.IANA_time_zone);
    const start = shiftBack(nowSec, { amount: c.window / DAY, unit: 'day' }, zone);
    return { lo: Math.floor(start) + 1, hi: Math.ceil(nowSec) - 1 };
  };
  type Side =
    | Exclude<keyof Row, 'name' | 'same'>
    | 'engineChOther'
    | 'engineChRolled'
    | 'engineChNarrow';
  /** The median time of each side given a run (NaN for the others). */
  const failures: string[] = [];
  const measure = async (name: string, sides: Partial<Record<Side, () => unknown>>) => {
    const list = Object.entries(sides) as Array<[Side, () => unknown]>;
    const times = new Map<Side, number[]>(list.map(([side]) => [side, []]));
    // A side slower than SLOW_RUN_MS a run (the engine on ClickHouse at 10M and more) is warmed
    // with two runs and timed once a round; a side that fails (a query past its time limit) is
    // left out of this query, said so under the tables, and the run goes on.
    const slow = new Set<Side>();
    const failed = new Set<Side>();
    const attempt = async (side: Side, run: () => unknown) => {
      if (failed.has(side)) return Number.NaN;
      const started = performance.now();
      try {
        await run();
      } catch (error) {
        failed.add(side);
        failures.push(`${side}, ${name}: ${(error as Error).message.slice(0, 200)}`);
        return Number.NaN;
      }
      const took = ms(started);
      if (took > SLOW_RUN_MS) slow.add(side);
      return took;
    };
    for (const [side, run] of list) {
      const warmUntil = performance.now() + WARM_UP_MS;
      for (let r = 0; r < WARM_UP_RUNS || performance.now() < warmUntil; r++) {
        await attempt(side, run);
        if (failed.has(side) || (slow.has(side) && r >= 1)) break;
      }
      samplePeak();
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const [side, run] of list) {
        if (failed.has(side)) continue;
        if (!slow.has(side)) for (let r = 0; r < SETTLE_RUNS; r++) await attempt(side, run);
        const until = performance.now() + MEASURE_MS / ROUNDS;
        const runs = slow.has(side) ? 1 : Math.ceil(options.runs / ROUNDS);
        for (let r = 0; r < runs || (!slow.has(side) && performance.now() < until); r++) {
          times.get(side)?.push(await attempt(side, run));
        }
      }
    }
    return (side: Side) => (failed.has(side) ? Number.NaN : median(times.get(side) ?? []));
  };
  // The server's memory is read between blocks, not between requests: reading
  // /proc/<pid>/status takes the process's memory-map lock, which its threads need for every page
  // fault, and its peak is the kernel's high-water mark anyway (VmHWM, below).
  const samplePeak = () => {
    if (server) peakRss = Math.max(peakRss, memoryOf(server.pid as number).rss);
  };
  // Asked twice at most more: a window ends at the request's own second, and an event can pass
  // its edge between two requests.
  const sameOnBothDrivers = async (c: QueryCase) => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const body = { api_key: KEY, ...c.body };
      const duck = JSON.parse(await post('/api/visualize/data', body));
      const answer = await postChEngine('/api/visualize/data', body).catch(() => undefined);
      if (answer === undefined) return undefined;
      if (sameAnswer(duck, JSON.parse(answer))) return true;
    }
    return false;
  };
  if (options.chQueriesOnly) {
    // The engine on ClickHouse against the hand-written statements (and another build's engine),
    // in the same rounds; each engine's answer checked against the other's first.
    for (const [index, c] of cases.entries()) {
      const sql = CLICKHOUSE_SQL[index];
      if (!sql) throw new Error(`bench engine: no ClickHouse statement for '${c.name}'`);
      const body = { api_key: KEY, ...c.body };
      const sides: Partial<Record<Side, () => unknown>> = {
        chHttp: () => postCh(`${sql(windowNow(c))} FORMAT JSONCompactEachRow`, HAND_WRITTEN_DB),
        engineCh: () => postChEngine('/api/visualize/data', body),
      };
      // Asked again at most twice, as a window's edge moves with the clock between asks.
      const agrees = async (theirs: () => Promise<string>) => {
        for (let attempt = 0; attempt < 3; attempt++) {
          const both = await Promise.all([postChEngine('/api/visualize/data', body), theirs()]);
          if (sameAnswer(JSON.parse(both[0]), JSON.parse(both[1]))) return true;
        }
        return false;
      };
      let same = '';
      if (chOtherUrl) {
        sides.engineChOther = () => postChOther('/api/visualize/data', body);
        same += (await agrees(() => postChOther('/api/visualize/data', body)))
          ? ', same answer as the other engine'
          : ', ANSWERS DIFFER from the other engine';
      }
      if (chRolledUrl) {
        sides.engineChRolled = () => postChRolled(c.body);
        same += (await agrees(() => postChRolled(c.body)))
          ? ', same answer with rollups'
          : ', ANSWERS DIFFER with rollups';
      }
      if (chNarrowUrl) {
        sides.engineChNarrow = () => postChNarrow(body);
        same += (await agrees(() => postChNarrow(body)))
          ? ', same answer with key columns'
          : ', ANSWERS DIFFER with key columns';
      }
      const time = await measure(c.name, sides);
      const hand = time('chHttp');
      const beside = (label: string, side: Side) =>
        `, ${label} ${fmt(time(side))} ms (${fmt(time(side) / hand, 2)}×, +${fmt(time(side) - hand)} ms)`;
      const engine = time('engineCh');
      const other = chOtherUrl ? beside('other engine', 'engineChOther') : '';
      const rolled = chRolledUrl ? beside('engine/CH with rollups', 'engineChRolled') : '';
      const ruling = (side: Side) => (withinRuling(time(side), hand) ? 'met' : 'NOT MET');
      const rolledRuling = chRolledUrl ? `, with rollups ${ruling('engineChRolled')}` : '';
      const narrow = chNarrowUrl ? beside('engine/CH with key columns', 'engineChNarrow') : '';
      const narrowRuling = chNarrowUrl ? `, with key columns ${ruling('engineChNarrow')}` : '';
      log(
        `${c.name}: CH/HTTP ${fmt(hand)} ms, engine/CH ${fmt(engine)} ms (${fmt(engine / hand, 2)}×, +${fmt(engine - hand)} ms)${other}${rolled}${narrow}${same}; at most 1.3x or 5 ms more: ${ruling('engineCh')}${rolledRuling}${narrowRuling}`,
      );
    }
    for (const f of failures) log(`failed: ${f}`);
    stopServers();
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
    return;
  }
  // Samples narrows its scan to the window's last hour first: when that hour holds no event (the
  // file's newest event is older, as in a long run), it reads a day, which costs more.
  let samplesAge = Number.NaN;
  for (const [index, c] of (options.bulkOnly ? [] : cases).entries()) {
    if (c.body.graph_type === 'Samples') samplesAge = Date.now() / 1000 - now;
    const sql = CLICKHOUSE_SQL[index];
    if (!sql) throw new Error(`bench engine: no ClickHouse statement for '${c.name}'`);
    // The single-number queries (Sum, P95) must get the same answer from every side that gives
    // one, the engines included: a column that answers something else (or nothing) would compare
    // nothing. Asked again at most twice, as a window's edge moves with the clock between asks.
    if (index === 2 || index === 3) {
      const single = (text: string) => {
        const [first] = (JSON.parse(text) as { result: Array<Record<string, unknown>> }).result;
        return Number(Object.values(first ?? {})[0]);
      };
      let answers: Array<[string, number]> = [];
      for (let attempt = 0; attempt < 3; attempt++) {
        const w = windowNow(c);
        answers = [];
        if (floor) {
          const value = (await floor.runAndReadAll(c.floor(w))).getRows()[0]?.[0];
          answers.push(['the floor', Number(value)]);
          const body = { api_key: KEY, ...c.body };
          answers.push(['the engine on DuckDB', single(await post('/api/visualize/data', body))]);
        }
        if (chdb) answers.push(['chdb', Number(JSON.parse((await chdb.query(sql(w))).trim())[0])]);
        if (withClickHouse) {
          const text = await postCh(`${sql(w)} FORMAT JSONCompactEachRow`, HAND_WRITTEN_DB);
          answers.push(['ClickHouse over HTTP', Number(JSON.parse(text.trim())[0])]);
          const body = { api_key: KEY, ...c.body };
          const engine = await postChEngine('/api/visualize/data', body).catch(() => undefined);
          // A failure here (a query past its time limit) is reported by the timing below.
          if (engine !== undefined) answers.push(['the engine on ClickHouse', single(engine)]);
        }
        const base = answers[0]?.[1] ?? Number.NaN;
        if (answers.every(([, value]) => sameAnswer(base, value))) break;
      }
      const base = answers[0];
      const odd = answers.find(([, value]) => !sameAnswer(base?.[1], value));
      if (base && odd) {
        throw new Error(
          `bench engine: ${odd[0]} answers ${odd[1]} to '${c.name}', ${base[0]} ${base[1]}`,
        );
      }
    }
    const win = () => windowNow(c);
    const sides: Partial<Record<Side, () => unknown>> = {};
    if (withDuckDb && floor) {
      sides.engine = () => post('/api/visualize/data', { api_key: KEY, ...c.body });
      sides.floor = async () => (await floor.runAndReadAll(c.floor(win()))).getRows();
      sides.floorHttp = () => postFloor(c.floor(win()));
      sides.js = () => c.js(columns, win());
    }
    if (chdb) sides.chdb = () => chdb.query(sql(win()));
    if (withClickHouse) {
      sides.engineCh = () => postChEngine('/api/visualize/data', { api_key: KEY, ...c.body });
      sides.chHttp = () => postCh(`${sql(win())} FORMAT JSONCompactEachRow`, HAND_WRITTEN_DB);
    }
    const time = await measure(c.name, sides);
    rows.push({
      name: c.name,
      engine: time('engine'),
      floor: time('floor'),
      floorHttp: time('floorHttp'),
      js: time('js'),
      chdb: time('chdb'),
      engineCh: time('engineCh'),
      chHttp: time('chHttp'),
      same: withDuckDb && withClickHouse ? await sameOnBothDrivers(c) : undefined,
    });
  }

  // The fixed cost of the HTTP path itself: a request that does no query work.
  const roundTrip = async (ask: () => Promise<string>) => {
    const times: number[] = [];
    for (let r = 0; r < 30; r++) {
      const s = performance.now();
      await ask();
      times.push(ms(s));
    }
    return median(times);
  };
  const emptyTrip =
    withDuckDb && !options.bulkOnly
      ? await roundTrip(() => post('/api/collections', { api_key: KEY }))
      : Number.NaN;
  const emptyTripCh =
    withClickHouse && !options.bulkOnly
      ? await roundTrip(() => postChEngine('/api/collections', { api_key: KEY }))
      : Number.NaN;

  // /api/bulk-log in batches of 1,000 over BULK_CONNECTIONS keep-alive connections. The bodies
  // are serialised before the clock starts and sent with node:http, so that the client, which
  // shares the machine's two cores with the server, spends as little of them as it can. The
  // first BULK_WARM_UP batches are sent before the clock starts: they create the collection and
  // let both sides' code be compiled, so the figure is the steady rate.
  const agent = new Agent({ keepAlive: true, maxSockets: BULK_CONNECTIONS });
  const send = async (base: string, list: string[]) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: BULK_CONNECTIONS }, async () => {
        while (next < list.length) {
          await postRaw(agent, `${base}/api/bulk-log`, list[next++] as string);
        }
      }),
    );
  };
  /** Batches of 1,000 demo events for `collection`, each with the same one timestamp. */
  const batches = (collection: string, events: Iterable<{ payload: string }>) => {
    const out: string[] = [];
    let list: string[] = [];
    const flush = () => {
      out.push(JSON.stringify({ api_key: KEY, collection, timestamp: now, jsons: list }));
      list = [];
    };
    for (const record of events) {
      list.push(record.payload);
      if (list.length === 1000) flush();
    }
    if (list.length) flush();
    return out;
  };
  /** Events per second of `/api/bulk-log` at `base` after the warm-up batches. */
  const bulkRate = async (base: string, collection: string, events: number, seed: number) => {
    const bodies = batches(collection, demoEvents(events + BULK_WARM_UP * 1000, seed, now));
    await send(base, bodies.splice(0, BULK_WARM_UP));
    const s = performance.now();
    await send(base, bodies);
    return rate(events, ms(s));
  };
  const bulkEvents = options.bulkOnly
    ? 200_000
    : Math.min(200_000, Math.max(20_000, Math.floor(options.events / 5)));
  const bulk = withDuckDb ? await bulkRate(url, 'bulk_bench', bulkEvents, 7) : Number.NaN;
  let bulkCh = Number.NaN;
  let bulkChNarrow = Number.NaN;
  // CPU seconds of the serving engine and of the ClickHouse server during the measured batches
  // (the warm-up's too: both processes do the same work per batch throughout).
  const bulkChCpu = { all: { engine: 0, clickhouse: 0 }, narrow: { engine: 0, clickhouse: 0 } };
  const chBulkRate = async (side: 'all' | 'narrow', events: number, seed: number) => {
    const base = side === 'all' ? chEngineUrl : chNarrowUrl;
    const engine = chServePids.get(base) as number;
    const [e0, c0] = [processCpu(engine), processCpu(chServerPid)];
    const rate = await bulkRate(base, 'bulk_bench', events, seed);
    bulkChCpu[side].engine += processCpu(engine) - e0;
    bulkChCpu[side].clickhouse += processCpu(chServerPid) - c0;
    return rate;
  };
  if (withClickHouse && chNarrowUrl) {
    // Alternating halves, so that both serves see the machine alike.
    const seconds = { all: 0, narrow: 0 };
    for (const [half, seed] of [7, 8].entries()) {
      const first = half === 0 ? 'all' : 'narrow';
      for (const side of [first, first === 'all' ? 'narrow' : 'all'] as const) {
        seconds[side] += bulkEvents / 2 / (await chBulkRate(side, bulkEvents / 2, seed));
      }
    }
    bulkCh = Math.round(bulkEvents / seconds.all);
    bulkChNarrow = Math.round(bulkEvents / seconds.narrow);
  } else if (withClickHouse) {
    bulkCh = await chBulkRate('all', bulkEvents, 7);
  }
  /** The CPU of one side's bulk-log per 1,000 events sent (warm-up batches included). */
  const perThousand = (side: 'all' | 'narrow') => {
    const sent = bulkEvents + (chNarrowUrl ? BULK_WARM_UP * 2 : BULK_WARM_UP) * 1000;
    const cpu = bulkChCpu[side];
    return { engine: (cpu.engine * 1e6) / sent, clickhouse: (cpu.clickhouse * 1e6) / sent };
  };
  /** Stops the servers and closes the baselines, once measuring is over. */
  const tearDown = async () => {
    for (const a of [agent, queryAgent, floorAgent, chAgent, chEngineAgent, chNarrowAgent]) {
      a.destroy();
    }
    process.off('exit', stopServers);
    stopServers();
    await Promise.all(children.map(finished));
    floor?.closeSync();
    floorDb?.closeSync();
    chdb?.close();
  };
  if (options.bulkOnly) {
    const figure = (driver: string, r: number, side?: 'all' | 'narrow') => {
      if (Number.isNaN(r)) return [];
      const cpu = side && perThousand(side);
      const per = cpu
        ? ` (CPU per 1,000 events: engine ${fmt(cpu.engine)} ms, ClickHouse ${fmt(cpu.clickhouse)} ms)`
        : '';
      return [`${driver} ${r.toLocaleString('en-US')} events/s${per}`];
    };
    log(
      `bulk only: /api/bulk-log, ${bulkEvents.toLocaleString('en-US')} events in batches of 1,000 over ${BULK_CONNECTIONS} connections: ${[...figure('DuckDB', bulk), ...figure('ClickHouse', bulkCh, 'all'), ...figure(`ClickHouse with ${narrowFlags.join(' ')}`, bulkChNarrow, 'narrow')].join(', ')}`,
    );
    await tearDown();
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
    return;
  }

  // Bulk ingest into collections that have already seen 10, 300 and 3,000 keys, of demo events
  // that carry none of them: the cost of a batch must not grow with the keys seen before.
  const keyedEvents = Math.min(200_000, Math.max(50_000, Math.floor(options.events / 5)));
  const keyedRates: Array<{ keys: number; rate: number }> = [];
  for (const keys of withDuckDb ? KEY_COUNTS : []) {
    const collection = `keys_${keys}`;
    const seed: string[] = [];
    for (let k = 0; k < keys; k += 100) {
      const json: Record<string, number | string> = {};
      for (let j = k; j < Math.min(keys, k + 100); j++) json[`seen_${j}`] = j % 2 ? j : `v${j}`;
      seed.push(JSON.stringify(json));
    }
    await send(url, [JSON.stringify({ api_key: KEY, collection, timestamp: now, jsons: seed })]);
    keyedRates.push({ keys, rate: await bulkRate(url, collection, keyedEvents, 11) });
  }
  const memory = server ? memoryOf(server.pid as number) : { rss: 0, peak: 0 };
  peakRss = Math.max(peakRss, memory.rss);

  // Bulk ingest with rollups on against off: two fresh `engine serve`s in alternating rounds, on
  // each driver measured (on ClickHouse, two workspace databases on the same server).
  const rollupRounds = Math.max(6, Math.min(20, Math.floor(bulkEvents / ROUND_EVENTS)));
  const rollupIngestOn = async (clickhouse?: { url: string; pid: number }) => {
    const measured = await measureRollupIngest(rollupIngestTools, {
      dir: mkdtempSync(join(dir, 'rollup-ingest-')),
      builds: [{ name: 'this build' }],
      rounds: rollupRounds,
      now,
      ...(clickhouse ? { clickhouse } : {}),
    });
    const [build] = measured.builds;
    return build && { ...build, events: measured.events };
  };
  const rollupIngest = withDuckDb ? await rollupIngestOn() : undefined;
  const rollupIngestCh = withClickHouse
    ? await rollupIngestOn({ url: chUrl, pid: chServerPid })
    : undefined;

  await tearDown();

  report({
    options,
    rows,
    emptyTrip,
    emptyTripCh,
    samplesAge,
    failures,
    loads: {
      floor: floorLoadTimes,
      engine: loadTimes,
      chdb: chdbLoadTimes,
      floorMs: floorLoadMs,
      engineMs: loadMs,
      chdbMs: chdbLoadMs,
      cpu: {
        floor: median(floorLoadCpu),
        engine: median(loadCpu),
        chdb: median(chdbLoadCpu),
      },
      chHttp: chHttpLoadTimes,
      chEngine: chEngineLoadTimes,
      chHttpMs: median(chHttpLoadTimes),
      chEngineMs: median(chEngineLoadTimes),
      chNarrowMs: median(chNarrowLoadTimes),
      chCpu: {
        engine: median(chEngineLoadCpu),
        serverForEngine: median(chServerCpu.engine),
        serverForHttp: median(chServerCpu.http),
      },
    },
    bulk: {
      events: bulkEvents,
      rate: bulk,
      rateCh: bulkCh,
      rateChNarrow: bulkChNarrow,
      cpuCh: perThousand('all'),
      cpuChNarrow: perThousand('narrow'),
      keyedEvents,
      keyed: keyedRates,
      rollups: rollupIngest,
      rollupsCh: rollupIngestCh,
    },
    memory: { ...memory, highest: peakRss },
  });
  log(
    `started ${started.toISOString()}, finished ${new Date().toISOString()}; load average after: ${loadavg()
      .map((l) => fmt(l, 2))
      .join(', ')}`,
  );

  if (options.keep) log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

/** What one run measured, for {@link report}. */
interface Measured {
  options: Options;
  rows: Array<{
    name: string;
    engine: number;
    floor: number;
    floorHttp: number;
    js: number;
    chdb: number;
    engineCh: number;
    chHttp: number;
    same: boolean | undefined;
  }>;
  /** Medians of a request that does no query work, on each driver. */
  emptyTrip: number;
  emptyTripCh: number;
  /** Seconds between the newest generated event and the Samples case. */
  samplesAge: number;
  /** Sides left out of a query because a run failed, with the reason. */
  failures: string[];
  loads: {
    floor: number[];
    engine: number[];
    chdb: number[];
    floorMs: number;
    engineMs: number;
    chdbMs: number;
    /** Median CPU seconds of each load (NaN where not measured). */
    cpu: { floor: number; engine: number; chdb: number };
    /** Each round's hand-written INSERT over HTTP and `engine load --clickhouse`, and medians. */
    chHttp: number[];
    chEngine: number[];
    chHttpMs: number;
    chEngineMs: number;
    /** `engine load --clickhouse` typing `--ch-key-columns` only (NaN where not measured). */
    chNarrowMs: number;
    /** Median CPU seconds: the load's process, and the ClickHouse server's during each side. */
    chCpu: { engine: number; serverForEngine: number; serverForHttp: number };
  };
  bulk: {
    events: number;
    rate: number;
    rateCh: number;
    /** The same into the workspace typing `--ch-key-columns` only (NaN where not measured). */
    rateChNarrow: number;
    /** CPU milliseconds per 1,000 events of the serving engine and the ClickHouse server. */
    cpuCh: { engine: number; clickhouse: number };
    cpuChNarrow: { engine: number; clickhouse: number };
    keyedEvents: number;
    keyed: Array<{ keys: number; rate: number }>;
    /** Events/s of alternating rounds into a serve without rollups and one with keyed rollups. */
    rollups?: RollupIngestFigures;
    /** The same on ClickHouse. */
    rollupsCh?: RollupIngestFigures;
  };
  memory: { rss: number; peak: number; highest: number };
}

/** Prints the tables and the targets, each said to be met or not against this run's figures. */
function report(measured: Measured): void {
  const { options, rows, emptyTrip, emptyTripCh, samplesAge, failures, loads, bulk, memory } =
    measured;
  const pad = (s: string, n: number) => s.padEnd(n);
  const num = (s: string, n: number) => s.padStart(n);
  const cell = (n: number, digits = 1) => (Number.isNaN(n) ? '-' : fmt(n, digits));
  const withDuckDb = options.driver !== 'clickhouse';
  const withClickHouse = options.driver !== 'duckdb';
  const events = options.events;
  if (withDuckDb) {
    log('');
    log('engine on DuckDB, against DuckDB');
    log(
      `${pad('query', 42)}${num('engine ms', 11)}${num('floor ms', 10)}${num('× floor', 9)}${num('floor/HTTP ms', 15)}${num('× it', 7)}${num('JS loop ms', 12)}${num('× JS', 10)}`,
    );
    for (const r of rows) {
      log(
        `${pad(r.name, 42)}${num(cell(r.engine), 11)}${num(cell(r.floor), 10)}${num(cell(r.engine / r.floor, 2), 9)}${num(cell(r.floorHttp), 15)}${num(cell(r.engine / r.floorHttp, 2), 7)}${num(cell(r.js), 12)}${num(cell(r.engine / r.js, 2), 10)}`,
      );
    }
    log(
      `(engine: POST /api/visualize/data to \`engine serve\`; an HTTP round trip that does no query work, POST /api/collections: ${cell(emptyTrip)} ms median. floor: the same aggregation as hand-written DuckDB SQL over a flat table of typed top-level columns (timestamp, event, price, json) that read_ndjson filled from the same file, in the benchmark process; floor/HTTP: its statement behind a bare Hono route in a process of its own, asked by the same client as the engine; JS loop: typed arrays in the benchmark process)`,
    );
  }
  log(
    `(Samples ran ${fmt(samplesAge / 60)} min after the newest event${samplesAge > 3600 ? ": the window's last hour held no event, so the engine widened its scan" : ''})`,
  );
  log('');
  log('against ClickHouse (hand-written ClickHouse SQL on a table ordered by (event, timestamp))');
  log(
    `${pad('query', 42)}${num('chdb ms', 9)}${num('engine/DuckDB ms', 18)}${num('× chdb', 8)}${num('CH/HTTP ms', 12)}${num('engine/CH ms', 14)}${num('× CH/HTTP', 11)}${num('same answer', 13)}`,
  );
  for (const r of rows) {
    const same = r.same === undefined ? '-' : r.same ? 'yes' : 'NO';
    log(
      `${pad(r.name, 42)}${num(cell(r.chdb), 9)}${num(cell(r.engine), 18)}${num(cell(r.engine / r.chdb, 2), 8)}${num(cell(r.chHttp), 12)}${num(cell(r.engineCh), 14)}${num(cell(r.engineCh / r.chHttp, 2), 11)}${num(same, 13)}`,
    );
  }
  log(
    `(chdb: ClickHouse as a library in the benchmark process, max_threads 2, no HTTP; CH/HTTP: the same statement over ClickHouse's HTTP interface, served by chdb in a process of its own (the engine's test server), asked by the same client as the engines; engine/CH: \`engine serve --clickhouse\` on that same ClickHouse, its events in the engine's own table (collection, timestamp, seq, json, and the form columns an engine opening it adds for its top-level keys) ordered by (collection, timestamp), with --clickhouse-sort-field event (a projection of the form columns ordered by (collection, event, timestamp)), merged into one part as the hand-written table is; POST /api/collections, one small ClickHouse query: ${cell(emptyTripCh)} ms median. same answer: the engine's response bodies on the two drivers are equal)`,
  );

  for (const failure of failures) log(`left out: ${failure}`);
  log('');
  const rounds = options.loadRuns > 1 ? `, medians of ${options.loadRuns} interleaved rounds` : '';
  const perRound = (base: number[]) =>
    loads.engine.map((l, i) => `${fmt((base[i] ?? 0) / l, 2)}`).join(', ');
  const loadLine = (label: string, millis: number, note = '') => {
    if (Number.isNaN(millis)) return;
    log(
      `${pad(label, 46)}${num(rate(events, millis).toLocaleString('en-US'), 11)}${num(fmt(millis / 1000), 10)}${note ? `   ${note}` : ''}`,
    );
  };
  log(`${pad(`load${rounds}`, 46)}${num('events/s', 11)}${num('seconds', 10)}`);
  const cpuNote = (seconds: number) => (Number.isNaN(seconds) ? '' : `CPU ${fmt(seconds)} s; `);
  loadLine(
    'engine load (CLI, DuckDB)',
    loads.engineMs,
    Number.isNaN(loads.cpu.engine) ? '' : `CPU ${fmt(loads.cpu.engine)} s (all its threads)`,
  );
  loadLine(
    'DuckDB read_ndjson into the flat floor table',
    loads.floorMs,
    withDuckDb
      ? `${cpuNote(loads.cpu.floor)}engine load = ${fmt(loads.floorMs / loads.engineMs, 2)}× its rate${options.loadRuns > 1 ? `; by round ${perRound(loads.floor)}` : ''}`
      : '',
  );
  loadLine(
    'ClickHouse INSERT … FROM file (chdb)',
    loads.chdbMs,
    withDuckDb
      ? `${cpuNote(loads.cpu.chdb)}engine load = ${fmt(loads.chdbMs / loads.engineMs, 2)}× its rate${options.loadRuns > 1 ? `; by round ${perRound(loads.chdb)}` : ''} (with OPTIMIZE FINAL)`
      : `${cpuNote(loads.cpu.chdb)}(with OPTIMIZE FINAL)`,
  );
  const chRounds = (base: number[]) =>
    loads.chEngine.map((l, i) => `${fmt((base[i] ?? 0) / l, 2)}`).join(', ');
  loadLine(
    'engine load --clickhouse (CLI)',
    loads.chEngineMs,
    `CPU ${fmt(loads.chCpu.engine)} s, ClickHouse's ${fmt(loads.chCpu.serverForEngine)} s; file to queryable: form columns and the sort projection written by its inserts`,
  );
  loadLine(
    'ClickHouse INSERT … FROM file over HTTP',
    loads.chHttpMs,
    `ClickHouse's CPU ${fmt(loads.chCpu.serverForHttp)} s; engine load --clickhouse = ${fmt(loads.chHttpMs / loads.chEngineMs, 2)}× its rate${loads.chEngine.length > 1 ? `; by round ${chRounds(loads.chHttp)}` : ''} (with OPTIMIZE FINAL; same server)`,
  );
  if (!Number.isNaN(loads.chNarrowMs)) {
    loadLine(
      'engine load --clickhouse, key columns of',
      loads.chNarrowMs,
      `${options.chKeyColumns} only (--clickhouse-key-columns): ${fmt(loads.chHttpMs / loads.chNarrowMs, 2)}× the INSERT's rate`,
    );
  }
  const bulkLine = (label: string, r: number, note: string) => {
    if (Number.isNaN(r)) return;
    log(
      `${pad(label, 46)}${num(r.toLocaleString('en-US'), 11)}${num(fmt(bulk.events / r), 10)}   ${note}`,
    );
  };
  bulkLine(
    `/api/bulk-log, DuckDB, 1,000 a batch, ${BULK_CONNECTIONS} in flight`,
    bulk.rate,
    `(${bulk.events.toLocaleString('en-US')} events; target 100,000/s)`,
  );
  /** The CPU a ClickHouse bulk-log line took, per 1,000 events (NaN where not measured). */
  const cpuPer = ({ engine, clickhouse }: { engine: number; clickhouse: number }) =>
    `CPU per 1,000 events: engine ${fmt(engine)} ms, ClickHouse ${fmt(clickhouse)} ms`;
  bulkLine(
    `/api/bulk-log, ClickHouse, batches of 1,000`,
    bulk.rateCh,
    `(${bulk.events.toLocaleString('en-US')} events; acknowledged after ClickHouse's synchronous insert, requests arriving meanwhile share the next, which waits up to 50 ms to gather more; ${cpuPer(bulk.cpuCh)})`,
  );
  bulkLine(
    `/api/bulk-log, ClickHouse, key columns of`,
    bulk.rateChNarrow,
    `(${options.chKeyColumns} only, --clickhouse-key-columns; alternating halves with the line before; ${cpuPer(bulk.cpuChNarrow)})`,
  );
  for (const { keys, rate: r } of bulk.keyed) {
    log(
      `${pad(`/api/bulk-log, DuckDB, into ${keys.toLocaleString('en-US')} keys`, 46)}${num(r.toLocaleString('en-US'), 11)}${num(fmt(bulk.keyedEvents / r), 10)}   (${bulk.keyedEvents.toLocaleString('en-US')} demo events carrying none of them)`,
    );
  }
  for (const [driver, figures] of [
    ['DuckDB', bulk.rollups],
    ['ClickHouse', bulk.rollupsCh],
  ] as const) {
    if (!figures) continue;
    const { off, on, ratio, events } = figures;
    log(
      `${pad(`/api/bulk-log, ${driver}, rollups off`, 46)}${num(off.toLocaleString('en-US'), 11)}${num(fmt(events / off), 10)}   (fresh serve; alternating rounds of 20,000 demo events with the next line)`,
    );
    log(
      `${pad(`/api/bulk-log, ${driver}, rollups by event, plan`, 46)}${num(on.toLocaleString('en-US'), 11)}${num(fmt(events / on), 10)}   (fresh serve, --rollup-keys event,plan --rollup-sums price; ${fmt(ratio, 2)}x the rate without, median of the rounds' ratios)`,
    );
  }
  if (withDuckDb) {
    log('');
    log(
      `serving process memory (DuckDB): ${fmt(memory.rss / 2 ** 30, 2)} GiB RSS at the end, ${fmt(memory.highest / 2 ** 30, 2)} GiB highest after a query block, ${fmt(memory.peak / 2 ** 30, 2)} GiB high-water mark (VmHWM, includes startup)`,
    );
  }

  // The targets against this run's figures, so that a reader need not work them out.
  const verdict = (met: boolean) => (met ? 'met' : 'NOT MET');
  const list = (misses: Array<{ name: string; ratio: number }>) =>
    misses.length
      ? ` (${misses.map((m) => `${m.name}: ${Number.isNaN(m.ratio) ? 'no answer' : fmt(m.ratio, 2)}`).join('; ')})`
      : '';
  const misses = (ratio: (r: Measured['rows'][number]) => number, limit: number) =>
    rows.map((r) => ({ name: r.name, ratio: ratio(r) })).filter((m) => !(m.ratio <= limit));
  const big = events >= 10_000_000;
  log('');
  log(`targets at ${events.toLocaleString('en-US')} events:`);
  if (withClickHouse) {
    const chLoad = loads.chHttpMs / loads.chEngineMs;
    log(
      `  engine load --clickhouse at least 0.5x ClickHouse's INSERT of the same NDJSON over HTTP, file to queryable: ${verdict(chLoad >= 0.5)} (${fmt(chLoad, 2)}x its rate)`,
    );
    const chNarrowLoad = loads.chHttpMs / loads.chNarrowMs;
    if (!Number.isNaN(chNarrowLoad)) {
      log(
        `    with key columns of ${options.chKeyColumns} only: ${verdict(chNarrowLoad >= 0.5)} (${fmt(chNarrowLoad, 2)}x)`,
      );
    }
    log(
      `  /api/bulk-log on ClickHouse at least 100,000 events/s: ${verdict(bulk.rateCh >= 100_000)} (${bulk.rateCh.toLocaleString('en-US')})`,
    );
    if (!Number.isNaN(bulk.rateChNarrow)) {
      log(
        `    with key columns of ${options.chKeyColumns} only: ${verdict(bulk.rateChNarrow >= 100_000)} (${bulk.rateChNarrow.toLocaleString('en-US')})`,
      );
    }
    if (bulk.rollupsCh) {
      const ratio = bulk.rollupsCh.ratio;
      log(
        `  ingest with rollups on at least 0.85x the rate with them off (ClickHouse): ${verdict(ratio >= 0.85)} (${fmt(ratio, 2)}x)`,
      );
    }
    const over = rows.filter((r) => !withinRuling(r.engineCh, r.chHttp));
    const overList = over
      .map((r) => `${r.name}: ${fmt(r.engineCh / r.chHttp, 2)}x, +${fmt(r.engineCh - r.chHttp)} ms`)
      .join('; ');
    log(
      `  engine on ClickHouse at most 1.3x or at most 5 ms more than hand-written ClickHouse SQL over HTTP, each query: ${verdict(over.length === 0)}${overList ? ` (${overList})` : ''}`,
    );
    const differ = rows.filter((r) => r.same === false);
    if (withDuckDb) {
      log(
        `  the same answers on both drivers: ${verdict(differ.length === 0)}${differ.length ? ` (${differ.map((r) => r.name).join('; ')})` : ''}`,
      );
    }
  }
  if (withDuckDb) {
    const behind = misses((r) => r.engine / r.chdb, 1.0);
    log(
      `  engine on DuckDB at or ahead of hand-written ClickHouse SQL in chdb, each query: ${verdict(behind.length === 0)}${list(behind)}${big ? '' : ' (the target is judged at 10M and 30M events)'}`,
    );
    const loadVsClickHouse = loads.chdbMs / loads.engineMs;
    log(
      `  engine load at least ClickHouse's INSERT of the same NDJSON: ${verdict(loadVsClickHouse >= 1)} (${fmt(loadVsClickHouse, 2)}x its rate; this issue's floor, 0.5x: ${verdict(loadVsClickHouse >= 0.5)})`,
    );
    const over = misses((r) => r.engine / r.floor, 1.5);
    log(`  each query at most 1.5x its floor: ${verdict(over.length === 0)}${list(over)}`);
    const overHttp = misses((r) => r.engine / r.floorHttp, 1.5);
    log(
      `  (the same against the floor served over HTTP: ${verdict(overHttp.length === 0)}${list(overHttp)}; the target names the floor, not this)`,
    );
    const dayCase = rows[0];
    log(
      big && dayCase
        ? `  Count per Day over 10M under 150 ms: ${verdict(dayCase.engine < 150)} (${fmt(dayCase.engine)} ms)`
        : '  Count per Day over 10M under 150 ms: judged only with --events 10M or more',
    );
    const loadRate = rate(events, loads.engineMs);
    const loadShare = loads.floorMs / loads.engineMs;
    log(
      `  engine load at least 1,000,000 events/s or 40% of read_ndjson: ${verdict(loadRate >= 1_000_000 || loadShare >= 0.4)} (${loadRate.toLocaleString('en-US')} events/s, ${fmt(loadShare * 100, 0)}%)`,
    );
    log(
      `  /api/bulk-log at least 100,000 events/s: ${verdict(bulk.rate >= 100_000)} (${bulk.rate.toLocaleString('en-US')})`,
    );
    const fewest = bulk.keyed[0];
    const most = bulk.keyed[bulk.keyed.length - 1];
    if (fewest && most) {
      const slowdown = fewest.rate / most.rate;
      log(
        `  bulk ingest into ${most.keys.toLocaleString('en-US')} keys within 1.5x of ${fewest.keys}: ${verdict(slowdown <= 1.5)} (${fmt(slowdown, 2)}x)`,
      );
    }
    if (bulk.rollups) {
      const ratio = bulk.rollups.ratio;
      log(
        `  ingest with rollups on at least 0.85x the rate with them off (DuckDB): ${verdict(ratio >= 0.85)} (${fmt(ratio, 2)}x)`,
      );
    }
    log(
      `  serving under 1.5 GiB RSS: ${verdict(memory.peak < 1.5 * 2 ** 30)} (high-water mark ${fmt(memory.peak / 2 ** 30, 2)} GiB)`,
    );
  }
}
