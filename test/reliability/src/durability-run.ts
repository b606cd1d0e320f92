/**
 * Item 1, durability: concurrent ingest through `/api/log` and `/api/bulk-log` into a real
 * `analytics-engine serve` process that is killed with SIGKILL at random moments and restarted
 * on the same data directory. Every event carries a unique id; the run records which ids got a
 * 2xx (acknowledged) and which were sent without one, then reads every stored event back and
 * counts each id in a plain loop.
 */
import { randomBytes } from 'node:crypto';
import { type ClickHouseTarget, startEngineProcess } from './engine-process.ts';
import { postJson } from './post-json.ts';
import { engineEvents } from './read-engine-events.ts';
import type { Random } from './seeded-random.ts';

/** What one durability run saw. */
export interface DurabilityOutcome {
  seed: number;
  kills: number;
  requestsSent: number;
  requestsAcknowledged: number;
  /** Requests that got an HTTP answer other than 2xx (all requests are valid: should be none). */
  requestsRefused: { status: number; text: string }[];
  eventsAcknowledged: number;
  /** Events whose request got no answer (in flight at a kill). */
  eventsUnacknowledged: number;
  eventsFound: number;
  /** Acknowledged ids not found after the last restart. */
  missing: string[];
  /** Ids stored more than once. */
  duplicates: string[];
  /** Stored ids the run never sent (corruption). */
  unknown: string[];
  /** Ids sent without an answer that were stored anyway (allowed). */
  unacknowledgedFound: number;
  /**
   * After each restart: acknowledged ids missing or ids stored twice at that moment (should be
   * none; the final check repeats it after the last restart).
   */
  restartShortfalls: { cycle: number; missing: number; duplicates: number }[];
  /** Milliseconds from each kill's cycle start to the kill. */
  killDelaysMs: number[];
  /** Anything the engine printed that contained the key (should be empty). */
  keyLeaks: number;
}

/** Settings of a run. */
export interface DurabilityOptions {
  dataDir: string;
  kills: number;
  random: Random;
  /** Concurrent writers per cycle. @default 6 */
  writers?: number;
  /** Longest moment after the engine is up at which it is killed. @default 1500 */
  maxKillDelayMs?: number;
  /** Serve from this ClickHouse (`serve --clickhouse`) instead of `dataDir`. */
  clickhouse?: ClickHouseTarget;
}

type Sent = { ids: string[]; acknowledged: boolean };

/** The check: a plain count per id over every stored payload. */
function countIds(rows: readonly string[]): { counts: Map<string, number> } {
  const counts = new Map<string, number>();
  for (const text of rows) {
    const uid = String((JSON.parse(text) as { uid?: unknown }).uid);
    counts.set(uid, (counts.get(uid) ?? 0) + 1);
  }
  return { counts };
}

/** Runs the kill/restart cycles and the final check. */
export async function runDurability(options: DurabilityOptions): Promise<DurabilityOutcome> {
  const { dataDir, random } = options;
  const apiKey = `dur-${randomBytes(12).toString('hex')}`;
  const writers = options.writers ?? 6;
  const maxDelay = options.maxKillDelayMs ?? 1500;
  const sent: Sent[] = [];
  const refused: DurabilityOutcome['requestsRefused'] = [];
  const shortfalls: DurabilityOutcome['restartShortfalls'] = [];
  const delays: number[] = [];
  let keyLeaks = 0;
  let next = 0;

  /** One valid ingest request with fresh unique ids, as the service's clients send them. */
  const makeRequest = (cycle: number) => {
    const timestamp = 1_700_000_000 + random.int(0, 86_400 * 30);
    const event = () => {
      const uid = `c${cycle}-e${next++}`;
      const payload = { uid, cycle, n: random.int(0, 1000), tag: random.pick(['a', 'b', 'c']) };
      return { uid, payload };
    };
    if (random.next() < 0.5) {
      const { uid, payload } = event();
      const json = random.next() < 0.5 ? payload : JSON.stringify(payload);
      return { path: '/api/log', ids: [uid], body: { api_key: apiKey, timestamp, json } };
    }
    const events = Array.from({ length: random.int(1, 40) }, event);
    return {
      path: '/api/bulk-log',
      ids: events.map((e) => e.uid),
      body: { api_key: apiKey, timestamp, jsons: events.map((e) => JSON.stringify(e.payload)) },
    };
  };

  for (let cycle = 0; cycle < options.kills; cycle++) {
    const engine = await startEngineProcess(dataDir, apiKey, options.clickhouse);
    // The events acknowledged before this start must all be back, once each.
    const { counts } = countIds(await engineEvents(engine.url, apiKey));
    let missing = 0;
    for (const s of sent)
      if (s.acknowledged) for (const id of s.ids) if (!counts.has(id)) missing++;
    const duplicates = [...counts.values()].filter((n) => n > 1).length;
    if (missing > 0 || duplicates > 0) shortfalls.push({ cycle, missing, duplicates });

    let dead = false;
    const writer = async () => {
      while (!dead) {
        const request = makeRequest(cycle);
        const record: Sent = { ids: request.ids, acknowledged: false };
        sent.push(record);
        try {
          const answer = await postJson(`${engine.url}${request.path}`, request.body);
          if (answer.status >= 200 && answer.status < 300) record.acknowledged = true;
          else refused.push({ status: answer.status, text: answer.text.slice(0, 200) });
        } catch {
          // In flight at the kill: no answer, no promise made.
        }
      }
    };
    const started = Date.now();
    const running = Array.from({ length: writers }, writer);
    const delay = random.int(0, maxDelay);
    await new Promise((resolve) => setTimeout(resolve, delay));
    // Writers finish the request they have in flight (it dies with the engine) and stop.
    dead = true;
    await engine.kill9();
    delays.push(Date.now() - started);
    await Promise.all(running);
    if (engine.output().includes(apiKey)) keyLeaks++;
  }

  const engine = await startEngineProcess(dataDir, apiKey, options.clickhouse);
  let rows: string[];
  try {
    rows = await engineEvents(engine.url, apiKey);
  } finally {
    await engine.stop();
  }
  if (engine.output().includes(apiKey)) keyLeaks++;

  const { counts } = countIds(rows);
  const acknowledged = new Set<string>();
  const unacknowledged = new Set<string>();
  for (const s of sent)
    for (const id of s.ids) (s.acknowledged ? acknowledged : unacknowledged).add(id);
  return {
    seed: random.seed,
    kills: options.kills,
    requestsSent: sent.length,
    requestsAcknowledged: sent.filter((s) => s.acknowledged).length,
    requestsRefused: refused,
    eventsAcknowledged: acknowledged.size,
    eventsUnacknowledged: unacknowledged.size,
    eventsFound: rows.length,
    missing: [...acknowledged].filter((id) => !counts.has(id)),
    duplicates: [...counts].filter(([, n]) => n > 1).map(([id]) => id),
    unknown: [...counts.keys()].filter((id) => !acknowledged.has(id) && !unacknowledged.has(id)),
    unacknowledgedFound: [...unacknowledged].filter((id) => counts.has(id)).length,
    restartShortfalls: shortfalls,
    killDelaysMs: delays,
    keyLeaks,
  };
}
