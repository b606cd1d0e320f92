/**
 * Traces one representative chart-data request through the engine's sources and prints the
 * engine files it enters and how often it returns to a file it has already left.
 *
 * The request (a Multi Line of Sum(price) by day, filtered and split) runs in process on a
 * DuckDB workspace of a few hundred seeded events. Every statement, call and return position of
 * every engine source file gets a conditional breakpoint whose condition records the file and
 * answers false, so nothing ever pauses: the sequence of files is V8's own, the same on every
 * run. Only the traced call (`engine.query`, after two untraced warm-ups, the second with the
 * breakpoints set) is recorded.
 *
 *   node scripts/trace-request.mjs          # a readable summary
 *   node scripts/trace-request.mjs --json   # {"files": [...], "entered": n, "returns": n}
 *   node scripts/trace-request.mjs --max 10 # exit code 1 when there are more returns than 10
 *   node scripts/trace-request.mjs --request '{"graph_type":"Table"}'
 *                                           # another request: these fields over the traced one's
 *   node scripts/trace-request.mjs --driver clickhouse  # on ClickHouse (chdb behind the tests' wire server)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { register } from 'tsx/esm/api';

const ENGINE = resolve(fileURLToPath(import.meta.url), '../..');
const SRC = join(ENGINE, 'src');
const SRC_URL = pathToFileURL(SRC).href;
const NOW = 1_750_000_000;
const KEY = 'trace-key-0123456789';

/** The traced request: a time series with a filter, a metric Sum and a split. */
export const TRACED_REQUEST = {
  api_key: KEY,
  graph_type: 'Multi Line',
  aggregation: 'Sum',
  metric: 'price',
  split: 'country',
  filters: [['event', '=', 'purchase']],
  granularity: 'Day',
  start: '14 days ago',
  end: 'now',
  IANA_time_zone: 'Europe/Berlin',
};

/** Seeded events over the two weeks before NOW. */
function events() {
  const countries = ['US', 'DE', 'FR', 'JP', 'BR'];
  const kinds = ['purchase', 'page_view', 'login'];
  let seed = 7;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed;
  };
  return Array.from({ length: 400 }, () => ({
    timestamp: NOW - (next() % (14 * 86_400)),
    json: {
      event: kinds[next() % kinds.length],
      country: countries[next() % countries.length],
      price: (next() % 10_000) / 100,
    },
  }));
}

/**
 * The engine files `run` executes, one step per change of file: the file, and whether control
 * came into it by a call (`called`: a function not on the previous step's stack, called from
 * the previous step's file) rather than by a return or the resumption of an awaiting function.
 */
async function traceFiles(session, scripts, run, warm) {
  globalThis.__traceFiles = [];
  const stackLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 1000;
  const ids = [];
  for (const [scriptId, url] of scripts) {
    if (!url.startsWith(SRC_URL)) continue;
    const index = ids.push(url) - 1;
    const { locations } = await session.post('Debugger.getPossibleBreakpoints', {
      start: { scriptId, lineNumber: 0, columnNumber: 0 },
    });
    for (const location of locations) {
      await session.post('Debugger.setBreakpoint', {
        location: {
          scriptId,
          lineNumber: location.lineNumber,
          columnNumber: location.columnNumber,
        },
        condition: `(globalThis.__traceFiles.at(-1)?.i !== ${index} && globalThis.__traceFiles.push({ i: ${index}, stack: new Error().stack }), false)`,
      });
    }
  }
  try {
    // Setting the breakpoints takes seconds: a warm-up after it, unrecorded, leaves no time for
    // a background re-read (ClickHouse's key-column list, read again once 10 s old) to fall due
    // in the traced call, and a pause lets one it started end first.
    await warm();
    await new Promise((resolve) => setTimeout(resolve, 500));
    globalThis.__traceFiles = [];
    await run();
  } finally {
    Error.stackTraceLimit = stackLimit;
    await session.post('Debugger.disable');
  }
  let before = [];
  let beforeFile;
  return globalThis.__traceFiles.map(({ i, stack }) => {
    // The engine's frames, innermost first, each as function and file (positions left out).
    const frames = stack
      .split('\n')
      .slice(2)
      .map((line) => /^at (?:async )?(?:(.*) \()?(.+?):\d+:\d+\)?$/.exec(line.trim()))
      .filter((m) => m?.[2].startsWith(SRC) || m?.[2].startsWith(SRC_URL))
      .map((m) => `${m[1]}@${m[2]}`);
    // A call: a function not running at the previous step, called from the previous file.
    const caller = frames[1]?.slice(frames[1].lastIndexOf('@') + 1);
    const called = !before.includes(frames[0]) && caller !== undefined && caller === beforeFile;
    beforeFile = frames[0]?.slice(frames[0].lastIndexOf('@') + 1);
    before = frames;
    return { file: relative(SRC, fileURLToPath(ids[i])), called };
  });
}

/** The longest block of files a loop repeats that {@link collapseLoops} folds. */
const MAX_LOOP = 8;

/**
 * The sequence with each block that repeats at once (a loop over buckets, rows or series,
 * whose length depends on the data) kept once, so that the figure measures the code's path.
 */
export function collapseLoops(sequence, key = (step) => step) {
  const out = [];
  for (const file of sequence) {
    out.push(file);
    for (let period = 1; period <= MAX_LOOP && out.length >= 2 * period; period++) {
      const n = out.length;
      let repeats = true;
      for (let i = 0; i < period && repeats; i++)
        repeats = key(out[n - 1 - i]) === key(out[n - 1 - period - i]);
      if (repeats) {
        out.length = n - period;
        break;
      }
    }
  }
  return out;
}

/**
 * From the steps with their loops collapsed: the files entered (distinct); the returns to a
 * file already left (every step into a file seen before); and the calls into a file seen
 * before (`reentries`: the steps of `returns` that are calls, not returns to a caller).
 */
export function countReturns(steps) {
  const seen = new Set();
  let returns = 0;
  let reentries = 0;
  for (const step of collapseLoops(
    steps.map((s) => `${s.called ? '>' : '<'} ${s.file}`),
    (step) => step.slice(2),
  )) {
    const file = step.slice(2);
    if (seen.has(file)) {
      returns++;
      if (step.startsWith('>')) reentries++;
    }
    seen.add(file);
  }
  return { entered: seen.size, returns, reentries };
}

async function main() {
  const json = process.argv.includes('--json');
  const maxAt = process.argv.indexOf('--max');
  const max = maxAt === -1 ? undefined : Number(process.argv[maxAt + 1]);
  if (max !== undefined && !Number.isInteger(max)) throw new Error('--max takes a whole number');
  const requestAt = process.argv.indexOf('--request');
  const request =
    requestAt === -1
      ? TRACED_REQUEST
      : { ...TRACED_REQUEST, ...JSON.parse(process.argv[requestAt + 1] ?? '{}') };
  const driverAt = process.argv.indexOf('--driver');
  const driver = driverAt === -1 ? 'duckdb' : process.argv[driverAt + 1];
  if (driver !== 'duckdb' && driver !== 'clickhouse')
    throw new Error('--driver takes duckdb or clickhouse');
  register();
  const session = new Session();
  session.connect();
  const scripts = new Map();
  session.on('Debugger.scriptParsed', ({ params }) => scripts.set(params.scriptId, params.url));
  await session.post('Debugger.enable');
  const { createEngine } = await import(pathToFileURL(join(SRC, 'index.ts')).href);
  const dataDir = mkdtempSync(join(tmpdir(), 'engine-trace-'));
  // The ClickHouse server runs in this process, outside src, so the trace never enters it.
  const server =
    driver === 'clickhouse'
      ? await (
          await import(pathToFileURL(join(ENGINE, 'test/clickhouse/chdb-http-server.ts')).href)
        ).startChdbHttpServer({ path: join(dataDir, 'chdb'), password: KEY })
      : null;
  const engine = await createEngine({
    dataDir,
    workspaces: { default: KEY },
    now: () => NOW,
    logError: () => undefined,
    ...(server ? { clickhouse: { url: server.url, password: KEY, databasePrefix: 'trace_' } } : {}),
  });
  try {
    const byTime = new Map();
    for (const e of events()) {
      const list = byTime.get(e.timestamp) ?? [];
      list.push(JSON.stringify(e.json));
      byTime.set(e.timestamp, list);
    }
    for (const [timestamp, jsons] of byTime) {
      const answer = await engine.bulkLog({ api_key: KEY, timestamp, jsons });
      if (answer.status !== 200) throw new Error(`bulk-log: ${JSON.stringify(answer.body)}`);
    }
    const warm = await engine.query(request);
    if (warm.status !== 200) throw new Error(`query: ${JSON.stringify(warm.body)}`);
    let answer;
    const files = await traceFiles(
      session,
      scripts,
      async () => {
        answer = await engine.query(request);
      },
      () => engine.query(request),
    );
    if (JSON.stringify(answer.body) !== JSON.stringify(warm.body)) {
      throw new Error('the traced answer differs from the untraced one');
    }
    const { entered, returns, reentries } = countReturns(files);
    if (max !== undefined && returns > max) process.exitCode = 1;
    if (json) {
      process.stdout.write(`${JSON.stringify({ files, entered, returns, reentries })}\n`);
    } else {
      const steps = collapseLoops(
        files.map((s) => `${s.called ? '>' : '<'} ${s.file}`),
        (step) => step.slice(2),
      );
      process.stdout.write(`${steps.join('\n')}\n\n`);
      process.stdout.write(
        `files entered: ${entered}\nreturns to a file already left: ${returns}\n` +
          `  of which calls into a file already left: ${reentries}\n`,
      );
    }
  } finally {
    session.disconnect();
    await engine.close();
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
