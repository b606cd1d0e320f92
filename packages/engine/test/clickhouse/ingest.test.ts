import { createClient } from '@clickhouse/client-web';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { isConnectionError } from '../../src/storage/clickhouse/clickhouse-errors.ts';
import {
  insertRendered,
  nextSeqs,
  renderBatch,
} from '../../src/storage/clickhouse/clickhouse-ingest.ts';
import { addKeyColumnsSql } from '../../src/storage/clickhouse/clickhouse-key-columns.ts';
import { formColumnsOf } from '../../src/storage/clickhouse/clickhouse-rows.ts';
import { workspaceSchema } from '../../src/storage/clickhouse/clickhouse-schema.ts';
import { clickHouseProxy } from '../helpers/clickhouse-proxy.ts';
import { API_KEY, startServer, type TestServer } from '../helpers/engine-server.ts';

/**
 * Ingest and the collection catalog on the ClickHouse driver: an acknowledged event is in
 * ClickHouse, and an insert whose acknowledgement is lost on the way back is retried without
 * being written twice.
 */

const url = inject('clickhouseUrl');
const password = inject('clickhousePassword');
const direct = createClient({ url, password });
afterAll(() => direct.close());

async function countIn(database: string, collection: string): Promise<number> {
  const result = await direct.query({
    query: `SELECT count() AS c FROM \`${database}\`._engine_events WHERE collection = {c:String}`,
    query_params: { c: collection },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ c: string }>();
  return Number(row?.c);
}

describe('ingest on ClickHouse', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({
      now: () => 1_700_000_000,
      clickhouse: { url, password, databasePrefix: 'ingest_' },
    });
  });
  afterAll(() => server?.close());

  test('log and bulk-log are in ClickHouse when they are acknowledged, payloads as stored on DuckDB', async () => {
    const text = '{"n":1.50,"big":18446744073709551616,"s":"é\\u00e9"}';
    // As sent, but for a number a double holds exactly, in its one form (2^64's digits are kept).
    const kept = '{"n":1.5,"big":18446744073709551616,"s":"é\\u00e9"}';
    const one = await server.post('/api/log', {
      api_key: API_KEY,
      collection: 'signups',
      json: text,
    });
    expect(one).toMatchObject({ status: 200, body: { ok: true, count: 1 } });
    const bulk = await server.post('/api/bulk-log', {
      api_key: API_KEY,
      collection: 'signups',
      timestamp: 1_600_000_000,
      jsons: [{ a: 1 }, { a: 1 }, '{"a":2}'],
    });
    expect(bulk).toMatchObject({ status: 200, body: { ok: true, count: 3 } });
    expect(await countIn('ingest_default', 'signups')).toBe(4);
    const stored = await direct.query({
      query: `SELECT timestamp, json FROM ingest_default._engine_events
              WHERE collection = 'signups' ORDER BY timestamp, seq`,
      format: 'JSONEachRow',
    });
    expect(await stored.json()).toEqual([
      { timestamp: '1600000000', json: '{"a":1}' },
      { timestamp: '1600000000', json: '{"a":1}' },
      { timestamp: '1600000000', json: '{"a":2}' },
      { timestamp: '1700000000', json: kept },
    ]);
  });

  test('Samples answer the payloads byte for byte, as on DuckDB', async () => {
    const answer = await server.post('/api/visualize/data', {
      api_key: API_KEY,
      collection: 'signups',
      graph_type: 'Samples',
      start: 1_699_999_000,
      end: 1_700_000_001,
    });
    expect(answer.status).toBe(200);
    expect(answer.text).toBe(
      '{"result":[{"timestamp":1700000000,"json":{"n":1.5,"big":18446744073709551616,"s":"é\\u00e9"}}],"metadata":{}}',
    );
  });

  test('the collection list comes from ClickHouse', async () => {
    await server.post('/api/log', { api_key: API_KEY, collection: 'a b', json: { x: 1 } });
    const answer = await server.post('/api/collections', { api_key: API_KEY });
    expect(answer.body).toEqual({ list: [{ name: 'a b' }, { name: 'signups' }] });
  });

  test('bad input is a 400 before anything is written', async () => {
    const before = await countIn('ingest_default', 'signups');
    const answer = await server.post('/api/bulk-log', {
      api_key: API_KEY,
      collection: 'signups',
      jsons: [{ a: 1 }, 'not json'],
    });
    expect(answer.status).toBe(400);
    expect(await countIn('ingest_default', 'signups')).toBe(before);
  });

  test("the engine's own table names are refused as collection names", async () => {
    const answer = await server.post('/api/log', {
      api_key: API_KEY,
      collection: '_engine_events',
      json: { x: 1 },
    });
    expect(answer).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/reserved/) },
    });
  });
});

describe('concurrent bulk-logs on ClickHouse', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ clickhouse: { url, password, databasePrefix: 'burst_' } });
  });
  afterAll(() => server?.close());

  test('concurrent bulk-logs share inserts, and each is stored when it is acknowledged', async () => {
    const REQUESTS = 24;
    const EACH = 400;
    const storedAtAck: number[] = [];
    await Promise.all(
      Array.from({ length: REQUESTS }, async (_, r) => {
        // Texts as clients send them, and a few as objects and in other spellings.
        const jsons = Array.from({ length: EACH }, (_, k) =>
          k % 50 === 0
            ? { r, k, v: k / 4 }
            : k % 50 === 1
              ? `{ "r": ${r}, "k": ${k} }`
              : JSON.stringify({ r, k, s: `x${k}` }),
        );
        const answer = await server.post('/api/bulk-log', {
          api_key: API_KEY,
          collection: r % 2 ? 'burst_odd' : 'burst_even',
          timestamp: 1_650_000_000,
          jsons,
        });
        expect(answer).toMatchObject({ status: 200, body: { ok: true, count: EACH } });
        // Asked as soon as this request is acknowledged, while the others still run.
        const result = await direct.query({
          query: `SELECT count() AS c FROM burst_default._engine_events
                  WHERE collection IN ('burst_odd', 'burst_even') AND JSONExtractInt(json, 'r') = {r:Int64}`,
          query_params: { r },
          format: 'JSONEachRow',
        });
        storedAtAck[r] = Number((await result.json<{ c: string }>())[0]?.c);
      }),
    );
    expect(storedAtAck).toEqual(Array.from({ length: REQUESTS }, () => EACH));
    expect(await countIn('burst_default', 'burst_odd')).toBe((REQUESTS / 2) * EACH);
    expect(await countIn('burst_default', 'burst_even')).toBe((REQUESTS / 2) * EACH);
    // Within a request, the events keep their order in `seq`, and the typed forms are there.
    const ordered = await direct.query({
      query: `SELECT JSONExtractInt(json, 'r') AS r, groupArray(JSONExtractInt(json, 'k')) AS ks
              FROM (SELECT json FROM burst_default._engine_events
                    WHERE collection IN ('burst_odd', 'burst_even') ORDER BY seq)
              GROUP BY r ORDER BY r`,
      format: 'JSONEachRow',
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
    });
    const rows = await ordered.json<{ r: number; ks: number[] }>();
    expect(rows).toHaveLength(REQUESTS);
    for (const row of rows) expect(row.ks).toEqual(Array.from({ length: EACH }, (_, k) => k));
    const answer = await server.post('/api/visualize/data', {
      api_key: API_KEY,
      collection: 'burst_even',
      graph_type: 'Single Value',
      aggregation: 'Sum',
      metric: 'v',
      start: 1_649_999_000,
      end: 1_650_001_000,
    });
    // Sum of k / 4 over k = 0, 50, …, 350, in each of the even requests.
    const perRequest = [0, 50, 100, 150, 200, 250, 300, 350].reduce((a, k) => a + k / 4, 0);
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.stringify(answer.body)).toContain(String(perRequest * (REQUESTS / 2)));
  });
});

describe('an insert whose acknowledgement is lost', () => {
  let server: TestServer;
  let proxy: Awaited<ReturnType<typeof clickHouseProxy>>;
  let dropped = 0;
  beforeAll(async () => {
    // Forwards every request to ClickHouse, but cuts the connection instead of relaying the
    // answer of the first event insert: ClickHouse has the rows, the engine never hears so.
    proxy = await clickHouseProxy(url, {
      after: (statement, answer, req) => {
        if (dropped > 0 || !statement.startsWith('INSERT INTO `drop_default`.`_engine_events`'))
          return false;
        dropped++;
        answer.resume();
        answer.on('end', () => req.socket.destroy());
        return true;
      },
    });
    server = await startServer({
      clickhouse: { url: proxy.url, password, databasePrefix: 'drop_' },
    });
  });
  afterAll(async () => {
    await server?.close();
    proxy.close();
  });

  test('is retried with the same deduplication token and stored once', async () => {
    const answer = await server.post('/api/bulk-log', {
      api_key: API_KEY,
      collection: 'retried',
      jsons: [{ a: 1 }, { a: 2 }, { a: 3 }],
    });
    expect(dropped).toBe(1);
    expect(answer).toMatchObject({ status: 200, body: { ok: true, count: 3 } });
    expect(await countIn('drop_default', 'retried')).toBe(3);
  });
});

describe('an insert ClickHouse refuses among concurrent bulk-logs', () => {
  let server: TestServer;
  let proxy: Awaited<ReturnType<typeof clickHouseProxy>>;
  let refused = 0;
  let held = false;
  beforeAll(async () => {
    // Forwards every request to ClickHouse, holds the first event insert a moment (so that the
    // requests arriving meanwhile gather into the next one), and refuses, as ClickHouse refuses
    // a statement, every event insert that carries the poisoned event.
    proxy = await clickHouseProxy(url, {
      before: async (statement, body, res) => {
        if (!statement.startsWith('INSERT INTO `refuse_default`.`_engine_events`')) return false;
        if (!held) {
          held = true;
          await new Promise((resolve) => setTimeout(resolve, 300));
        }
        if (!body.includes('poisoned')) return false;
        refused++;
        res.writeHead(500, { 'X-ClickHouse-Exception-Code': '1001' });
        res.end('Code: 1001. DB::Exception: refused by the test. (STD_EXCEPTION)\n');
        return true;
      },
    });
    server = await startServer({
      clickhouse: { url: proxy.url, password, databasePrefix: 'refuse_' },
    });
  });
  afterAll(async () => {
    await server?.close();
    proxy.close();
  });

  test('fails only its own request; every other one is stored when it is acknowledged', async () => {
    const REQUESTS = 10;
    const EACH = 200;
    const POISONED = 6;
    const answers: number[] = [];
    const storedAtAnswer: number[] = [];
    await Promise.all(
      Array.from({ length: REQUESTS }, async (_, r) => {
        // The first request goes alone and is held; the others arrive while it is.
        if (r > 0) await new Promise((resolve) => setTimeout(resolve, 50));
        const jsons = Array.from({ length: EACH }, (_, k) =>
          JSON.stringify(r === POISONED && k === 7 ? { r, k, poisoned: true } : { r, k }),
        );
        const answer = await server.post('/api/bulk-log', {
          api_key: API_KEY,
          collection: 'refused',
          timestamp: 1_650_000_000,
          jsons,
        });
        answers[r] = answer.status;
        const result = await direct.query({
          query: `SELECT count() AS c FROM refuse_default._engine_events
                  WHERE collection = 'refused' AND JSONExtractInt(json, 'r') = {r:Int64}`,
          query_params: { r },
          format: 'JSONEachRow',
        });
        storedAtAnswer[r] = Number((await result.json<{ c: string }>())[0]?.c);
      }),
    );
    // Refused in the group the others gathered into, then alone.
    expect(refused).toBe(2);
    expect(answers).toEqual(
      Array.from({ length: REQUESTS }, (_, r) => (r === POISONED ? 500 : 200)),
    );
    expect(storedAtAnswer).toEqual(
      Array.from({ length: REQUESTS }, (_, r) => (r === POISONED ? 0 : EACH)),
    );
    expect(await countIn('refuse_default', 'refused')).toBe((REQUESTS - 1) * EACH);
  });
});

describe('rows rendered as requests arrive', () => {
  const DB = 'rendered_default';
  beforeAll(async () => {
    for (const statement of workspaceSchema(DB)) await direct.command({ query: statement });
    await direct.command({ query: addKeyColumnsSql(DB, [['a'], ['b']]) });
  });
  afterAll(() => direct.command({ query: `DROP DATABASE IF EXISTS ${DB}` }));

  test('each seq comes after every one before it, past a full millisecond and a clock set back', () => {
    // Ahead of the clock, so that no other test's seqs of this process are later.
    const now = Date.now() + 1000;
    expect(nextSeqs(3, now)).toEqual([`${now}00000`, `${now}00001`, `${now}00002`]);
    const full = nextSeqs(99_999, now);
    expect([full[0], full.at(-1)]).toEqual([`${now + 1}00000`, `${now + 1}99998`]);
    expect(nextSeqs(2, now - 5)).toEqual([`${now + 2}00000`, `${now + 2}00001`]);
    expect(nextSeqs(1, now + 3)).toEqual([`${now + 3}00000`]);
  });

  test('requests rendered for other form columns share one insert, each row with its forms', async () => {
    const [a, b] = [formColumnsOf(['a']), formColumnsOf(['b'])];
    const batch = (payload: string) => ({
      collection: 'mixed',
      records: [{ timestamp: 1, payload, canonical: true }],
      keys: [],
    });
    // The first request met only `a`'s columns, the second both: one header for the insert.
    const first = renderBatch(batch('{"a":1,"b":"x"}'), [a]);
    const second = renderBatch(batch('{"a":"2","b":true}'), [a, b]);
    await insertRendered(direct, DB, [second, first], isConnectionError);
    const result = await direct.query({
      query: `SELECT ${a.number}, ${a.string}, ${b.number}, ${b.string}
              FROM ${DB}._engine_events WHERE collection = 'mixed' ORDER BY seq`,
      format: 'JSONCompactEachRow',
    });
    expect(await result.json()).toEqual([
      [1, '1', null, 'x'],
      [2, '2', null, 'true'],
    ]);
  });
});
