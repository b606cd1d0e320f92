import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MAX_EVENT_KEYS, WIDE_EVENT_KEYS } from '../src/storage/seen-key.ts';
import { API_KEY, startServer, type TestServer } from './helpers/engine-server.ts';
import { expectClose } from './helpers/expect-close.ts';
import { type FixtureEvent, referenceAnswer } from './helpers/reference.ts';

/**
 * Wide events (an attacker holding a workspace key, or a logger writing a map keyed by user
 * ids): an event of more than MAX_EVENT_KEYS key paths is refused with a sentence naming it, one
 * at the limit is stored, queries on keys only wide events hold answer as the reference does,
 * and bulks of wide events never keep the workspace from taking other writes.
 */

const NOW = 1_800_000_000;
let server: TestServer;

beforeAll(async () => {
  server = await startServer({ now: () => NOW });
});

afterAll(async () => {
  await server?.close();
});

/** An object of `n` keys `user_<i>` (a map keyed by ids), values from `value(i)`. */
const idMap = (n: number, value: (i: number) => unknown, prefix = 'user_') =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, value(i)]));

async function bulk(collection: string, timestamp: number, jsons: unknown[]) {
  return server.post('/api/bulk-log', { api_key: API_KEY, collection, timestamp, jsons });
}

async function count(collection: string): Promise<number> {
  const answer = await server.post('/api/visualize/data', {
    api_key: API_KEY,
    collection,
    graph_type: 'Single Value',
    start: NOW - 86_400,
    end: NOW + 10,
    aggregation: 'Count',
  });
  expect(answer.status).toBe(200);
  return answer.body.result[0].Count;
}

describe('the per-event key limit', () => {
  test('an event of 10,000 keys is refused, naming the line and the limit; nothing stored', async () => {
    const wide = idMap(10_000, (i) => i);
    const refusal = `holds more than ${MAX_EVENT_KEYS} keys (key paths up to 6 levels deep, objects included); split it into several events`;
    expect(await bulk('limit', NOW - 60, [{ a: 1 }, { a: 2 }, wide])).toMatchObject({
      status: 400,
      body: { error: `jsons[2]: ${refusal}` },
    });
    expect(await bulk('limit', NOW - 60, ['{"a":1}', JSON.stringify(wide)])).toMatchObject({
      status: 400,
      body: { error: `jsons[1]: ${refusal}` },
    });
    expect(
      await server.post('/api/log', { api_key: API_KEY, collection: 'limit', json: wide }),
    ).toMatchObject({ status: 400, body: { error: `json: ${refusal}` } });
    // Nested objects count too: 10 objects of 101 keys are 1,020 key paths.
    const nested = Object.fromEntries(
      Array.from({ length: 10 }, (_, g) => [`g${g}`, idMap(101, (i) => i)]),
    );
    expect(
      await server.post('/api/log', { api_key: API_KEY, collection: 'limit', json: nested }),
    ).toMatchObject({ status: 400, body: { error: `json: ${refusal}` } });
    expect(await count('limit')).toBe(0);
  });

  test(`an event of exactly ${MAX_EVENT_KEYS} keys is stored`, async () => {
    const answer = await bulk('at-limit', NOW - 60, [
      JSON.stringify(idMap(MAX_EVENT_KEYS, (i) => i)),
    ]);
    expect(answer.status).toBe(200);
    expect(await count('at-limit')).toBe(1);
  });
});

test('queries on keys that only wide events held answer as the reference does', async () => {
  const events: FixtureEvent[] = [];
  const add = (timestamp: number, json: Record<string, unknown>) =>
    events.push({ timestamp, json });
  const width = WIDE_EVENT_KEYS * 4;
  for (let e = 0; e < 12; e++) {
    const ts = NOW - 3_600 * (e + 1);
    // Narrow events: typed keys, as ever.
    add(ts, { event: 'view', plan: e % 2 ? 'pro' : 'free', price: e });
    // Wide ones: a map keyed by ids (values numbers, numeric strings and words), and a few keys
    // narrow events hold too.
    add(ts, {
      event: 'scores',
      plan: e % 3 ? 'pro' : 'team',
      price: `${e * 1.5}`,
      ...idMap(width, (i) => (i % 3 === 0 ? i * e : i % 3 === 1 ? `${i + e}` : `w${(i + e) % 4}`)),
    });
  }
  // Later, a narrow event holds a key the wide ones brought: it is read from the payload too.
  add(NOW - 30, { event: 'late', user_3: 1000, user_5: 'w1', plan: 'pro' });
  const byTime = new Map<number, unknown[]>();
  for (const { timestamp, json } of events) {
    byTime.set(timestamp, [...(byTime.get(timestamp) ?? []), json]);
  }
  for (const [timestamp, jsons] of byTime) {
    expect((await bulk('wide', timestamp, jsons)).status).toBe(200);
  }

  // Answers come from what was stored, not from what the engine kept in memory since.
  await server.restart(async () => undefined);
  const base = { collection: 'wide', start: NOW - 86_400, end: NOW + 10, timezone: 'UTC' };
  const queries: Array<Record<string, unknown>> = [
    { graph_type: 'Single Value', aggregation: 'Sum', metric: 'user_3' },
    { graph_type: 'Single Value', aggregation: 'Avg', metric: 'user_1' },
    { graph_type: 'Single Value', aggregation: 'P90', metric: 'user_6' },
    {
      graph_type: 'Single Value',
      aggregation: 'Count',
      filters: [[['user_3', '>', 10]]],
    },
    {
      graph_type: 'Single Value',
      aggregation: 'Count',
      filters: [[['user_5', '=', 'w1']]],
    },
    {
      graph_type: 'Single Value',
      aggregation: 'Count',
      filters: [[['user_4', 'includes', '1']]],
    },
    { graph_type: 'Table', aggregation: 'Count', split: 'user_2' },
    { graph_type: 'Table', aggregation: 'Sum', metric: 'user_3', split: 'plan' },
    {
      graph_type: 'Single Line',
      aggregation: 'Sum',
      metric: 'user_399',
      granularity: 'Hour',
      filters: [[['user_8', '≠', 'w2']]],
    },
    { graph_type: 'Table', aggregation: 'Sum', metric: 'price', split: 'event' },
  ];
  for (const query of queries) {
    const body = { api_key: API_KEY, ...base, ...query };
    const answer = await server.post('/api/visualize/data', body);
    expect(answer.status, answer.text).toBe(200);
    expectClose(answer.body, referenceAnswer(events, body, NOW, 'wide'));
  }
});

test('bulks of 10,000-key events never keep the workspace from taking other writes', async () => {
  // Bodies made before the clock starts (the attackers share this process with the server):
  // bulks of five 10,000-key events (refused) and of five events at the limit, each with keys no
  // event had (stored, their keys read from the payloads).
  const refused = JSON.stringify({
    api_key: API_KEY,
    collection: 'attack',
    timestamp: NOW - 10,
    jsons: Array.from({ length: 5 }, () => JSON.stringify(idMap(10_000, (i) => i))),
  });
  const stored = Array.from({ length: 6 }, (_, b) =>
    JSON.stringify({
      api_key: API_KEY,
      collection: 'attack',
      timestamp: NOW - 10,
      jsons: Array.from({ length: 5 }, (_, e) =>
        JSON.stringify(idMap(MAX_EVENT_KEYS, (i) => i, `a${b}_${e}_`)),
      ),
    }),
  );
  let storedEvents = 0;
  const statuses: number[] = [];
  /** Every answer in the order it came: a bulk's, or a small write's. */
  const answers: Array<'bulk' | 'small'> = [];
  // Two attackers, three bulks of each kind each, in turn.
  const attacker = async (a: number) => {
    for (let b = 0; b < 3; b++) {
      for (const body of [refused, stored[a * 3 + b] as string]) {
        const answer = await server.post('/api/bulk-log', body);
        answers.push('bulk');
        statuses.push(answer.status);
        if (answer.status === 200) storedEvents += answer.body.count;
      }
    }
  };
  const attackers = Promise.all([attacker(0), attacker(1)]);
  let done = false;
  void attackers.then(() => {
    done = true;
  });
  let acknowledged = 0;
  while (!done || acknowledged < 5) {
    const answer = await server.post('/api/log', {
      api_key: API_KEY,
      collection: 'attack',
      timestamp: NOW - 10,
      json: { event: 'small', n: acknowledged },
    });
    expect(answer.status, answer.text).toBe(200);
    answers.push('small');
    acknowledged++;
  }
  await attackers;
  // Correctness, not a benchmark: every wide bulk answered (stored or refused), small writes
  // acknowledged while bulks were still being answered, nothing acknowledged lost.
  expect(statuses.sort()).toEqual([200, 200, 200, 200, 200, 200, 400, 400, 400, 400, 400, 400]);
  expect(storedEvents).toBe(30);
  const lastBulk = answers.lastIndexOf('bulk');
  expect(answers.slice(0, lastBulk).filter((a) => a === 'small').length).toBeGreaterThan(0);
  expect(await count('attack')).toBe(acknowledged + storedEvents);
  const small = await server.post('/api/visualize/data', {
    api_key: API_KEY,
    collection: 'attack',
    graph_type: 'Single Value',
    start: NOW - 86_400,
    end: NOW + 10,
    aggregation: 'Count',
    filters: [[['event', '=', 'small']]],
  });
  expect(small.body.result[0].Count).toBe(acknowledged);
}, 30_000);

/** POSTs `body`; `sent` resolves once all of it is handed to the socket, `answer` with the status. */
function postRaw(path: string, body: string) {
  const { hostname, port } = new URL(server.url);
  let sent!: () => void;
  const allSent = new Promise<void>((resolve) => {
    sent = resolve;
  });
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(
      {
        host: hostname,
        port,
        path,
        method: 'POST',
        headers: { 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.on('finish', sent);
    req.end(body);
  });
  return { sent: allSent, answer };
}

test('a small write sent while a large bulk is being checked is answered before it', async () => {
  // Nearly 8 MB of events of 60 keys each, the last not JSON: checking it takes the engine a
  // while, all of it after the body has arrived, and ends in a refusal.
  const jsons: unknown[] = Array.from({ length: 9_000 }, (_, e) =>
    JSON.stringify(idMap(60, (i) => e * 100 + i, 'k')),
  );
  jsons.push('{"bad":');
  const big = postRaw(
    '/api/bulk-log',
    JSON.stringify({ api_key: API_KEY, collection: 'checked', timestamp: NOW - 5, jsons }),
  );
  let bulkAnswered = false;
  void big.answer.then(() => {
    bulkAnswered = true;
  });
  await big.sent;
  let before = 0;
  let small = 0;
  while (!bulkAnswered) {
    const answer = await server.post('/api/log', {
      api_key: API_KEY,
      collection: 'checked',
      timestamp: NOW - 5,
      json: { event: 'small', n: small },
    });
    expect(answer.status, answer.text).toBe(200);
    small++;
    if (!bulkAnswered) before++;
  }
  expect(JSON.parse((await big.answer).text)).toEqual({
    error: 'jsons[9000]: is not valid JSON',
  });
  expect(before).toBeGreaterThan(0);
  expect(await count('checked')).toBe(small);
}, 30_000);
