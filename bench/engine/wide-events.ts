/**
 * `pnpm bench engine --wide [--driver all|duckdb|clickhouse]`: wide events (issue 37, item 4).
 * On each driver, `engine serve` in a process of its own: the time to answer one event of
 * 10,000 keys (refused, past the per-event key limit) and one of 1,000 keys nobody sent before
 * (stored, at the limit), then another writer's latency (one small `/api/log` event at a time,
 * into another collection of the same workspace) alone, while three attackers send bulks of five
 * 10,000-key events without pause, and while they alternate those with bulks of five 1,000-key
 * events. Targets: a wide event answered in under 1 s, the other
 * writer's p99 meanwhile under 100 ms.
 */
import type { ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { join } from 'node:path';

/** What `main.ts` lends this section: its child processes, started the same way. */
export interface WideEventsTools {
  /** `engine serve …` as the installed package runs it. */
  engine(args: string[], env: Record<string, string>): ChildProcess;
  /** The chdb-backed ClickHouse HTTP server, in a data directory. */
  clickHouse(dir: string): ChildProcess;
  listening(child: ChildProcess): Promise<string>;
  log(line: string): void;
}

const KEY = 'bench-key';
const WIDE_KEYS = 10_000;
const LIMIT_KEYS = 1_000;
const MEASURE_RUNS = 5;
const OTHER_WRITER_MS = 5_000;
const ATTACKERS = 3;
const EVENTS_PER_BULK = 5;

/** Status and time of one POST over a keep-alive agent. */
function post(agent: Agent, url: string, body: string): Promise<{ status: number; ms: number }> {
  const { hostname, port, pathname } = new URL(url);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: hostname,
        port,
        path: pathname,
        method: 'POST',
        agent,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const idMap = (n: number, prefix: string) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]));

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
};
const median = (values: number[]) => percentile(values, 0.5);
const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 1 });

/** The other writer: small events one at a time for `ms`; each answer's time. */
async function otherWriter(url: string, ms: number): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  const started = performance.now();
  for (let n = 0; performance.now() - started < ms; n++) {
    const body = JSON.stringify({ api_key: KEY, collection: 'other', json: { event: 'small', n } });
    const answer = await post(agent, `${url}/api/log`, body);
    if (answer.status !== 200)
      throw new Error(`bench wide: a small write answered ${answer.status}`);
    times.push(answer.ms);
  }
  agent.destroy();
  return times;
}

async function measureDriver(url: string, name: string, log: (line: string) => void) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const logBody = (json: unknown) => JSON.stringify({ api_key: KEY, collection: 'wide', json });
  // Warm the request path and create the collections.
  for (const collection of ['wide', 'other', 'attack']) {
    await post(
      agent,
      `${url}/api/log`,
      JSON.stringify({ api_key: KEY, collection, json: { a: 1 } }),
    );
  }
  const wideBody = logBody(idMap(WIDE_KEYS, 'user_'));
  const refused: number[] = [];
  const stored: number[] = [];
  for (let run = 0; run < MEASURE_RUNS; run++) {
    const answer = await post(agent, `${url}/api/log`, wideBody);
    if (answer.status !== 400) throw new Error(`bench wide: 10,000 keys answered ${answer.status}`);
    refused.push(answer.ms);
    const fresh = await post(agent, `${url}/api/log`, logBody(idMap(LIMIT_KEYS, `r${run}_`)));
    if (fresh.status !== 200) throw new Error(`bench wide: 1,000 keys answered ${fresh.status}`);
    stored.push(fresh.ms);
  }
  agent.destroy();

  const alone = await otherWriter(url, OTHER_WRITER_MS / 2);

  // Bulks prepared before the clock starts: refused ones (10,000 keys an event) and stored ones
  // (1,000 keys no event had), in turn.
  const refusedBulk = JSON.stringify({
    api_key: KEY,
    collection: 'attack',
    jsons: Array.from({ length: EVENTS_PER_BULK }, () => JSON.stringify(idMap(WIDE_KEYS, 'u'))),
  });
  const storedBulks = Array.from({ length: 60 }, (_, b) =>
    JSON.stringify({
      api_key: KEY,
      collection: 'attack',
      jsons: Array.from({ length: EVENTS_PER_BULK }, (_, e) =>
        JSON.stringify(idMap(LIMIT_KEYS, `a${b}_${e}_`)),
      ),
    }),
  );
  /** The other writer while attackers send `bodyOf(n)` without pause; what they got. */
  const underAttack = async (bodyOf: (n: number) => string) => {
    let stop = false;
    let sent = 0;
    const bulkTimes: number[] = [];
    const statuses = new Map<number, number>();
    const attacker = async () => {
      const own = new Agent({ keepAlive: true, maxSockets: 1 });
      while (!stop) {
        const answer = await post(own, `${url}/api/bulk-log`, bodyOf(sent++));
        bulkTimes.push(answer.ms);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      }
      own.destroy();
    };
    const attackers = Array.from({ length: ATTACKERS }, attacker);
    const times = await otherWriter(url, OTHER_WRITER_MS);
    stop = true;
    await Promise.all(attackers);
    const answered = [...statuses].map(([status, n]) => `${n} × ${status}`).join(', ');
    return { times, bulkTimes, answered };
  };
  const refusedOnly = await underAttack(() => refusedBulk);
  const mixed = await underAttack((n) =>
    n % 2 === 0 ? refusedBulk : (storedBulks[(n >> 1) % storedBulks.length] as string),
  );

  const writer = (times: number[]) =>
    `${times.length} writes, p50 ${fmt(median(times))} ms, p99 ${fmt(percentile(times, 0.99))} ms, max ${fmt(Math.max(...times))} ms`;
  const bulks = (a: { bulkTimes: number[]; answered: string }) =>
    `${a.bulkTimes.length} bulks of ${EVENTS_PER_BULK} (${a.answered}), median ${fmt(median(a.bulkTimes))} ms, max ${fmt(Math.max(...a.bulkTimes))} ms`;
  log(`${name}:`);
  log(
    `  one event of ${fmt(WIDE_KEYS)} keys (refused, 400): median ${fmt(median(refused))} ms, max ${fmt(Math.max(...refused))} ms`,
  );
  log(
    `  one event of ${fmt(LIMIT_KEYS)} new keys (stored): median ${fmt(median(stored))} ms, max ${fmt(Math.max(...stored))} ms`,
  );
  log(`  other writer alone: ${writer(alone)}`);
  log(
    `  other writer while ${ATTACKERS} connections send bulks of ${fmt(WIDE_KEYS)}-key events: ${writer(refusedOnly.times)}`,
  );
  log(`    attack: ${bulks(refusedOnly)}`);
  log(
    `  other writer while they alternate with bulks of ${fmt(LIMIT_KEYS)}-new-key events: ${writer(mixed.times)}`,
  );
  log(`    attack: ${bulks(mixed)}`);
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  log(
    `  targets: a ${fmt(WIDE_KEYS)}-key event answered in < 1 s: ${met(Math.max(...refused) < 1000)}; other writers' p99 < 100 ms under ${fmt(WIDE_KEYS)}-key bulks: ${met(percentile(refusedOnly.times, 0.99) < 100)}`,
  );
}

/** Runs the wide-events section on the drivers asked for. */
export async function runWideEvents(
  driver: 'all' | 'duckdb' | 'clickhouse',
  dir: string,
  tools: WideEventsTools,
): Promise<void> {
  const children: ChildProcess[] = [];
  try {
    if (driver !== 'clickhouse') {
      const server = tools.engine(['serve', '--port', '0', '--data', join(dir, 'wide-duckdb')], {
        ANALYTICS_API_KEY: KEY,
      });
      children.push(server);
      await measureDriver(await tools.listening(server), 'DuckDB', tools.log);
      server.kill('SIGTERM');
    }
    if (driver !== 'duckdb') {
      const clickHouse = tools.clickHouse(join(dir, 'wide-clickhouse'));
      children.push(clickHouse);
      const chUrl = await tools.listening(clickHouse);
      const server = tools.engine(
        ['serve', '--port', '0', '--data', join(dir, 'unused'), '--clickhouse', chUrl],
        { ANALYTICS_API_KEY: KEY, CLICKHOUSE_USER: 'default', CLICKHOUSE_PASSWORD: '' },
      );
      children.push(server);
      await measureDriver(await tools.listening(server), 'ClickHouse (chdb over HTTP)', tools.log);
    }
  } finally {
    for (const child of children) child.kill('SIGTERM');
  }
}
