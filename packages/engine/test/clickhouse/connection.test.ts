import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@clickhouse/client-web';
import { afterAll, beforeAll, describe, expect, inject, onTestFinished, test } from 'vitest';
import { readRows } from '../../src/collection/clickhouse/clickhouse-events.ts';
import {
  connectClickHouse,
  MAX_OPEN_REQUESTS,
} from '../../src/drivers/clickhouse/clickhouse-connection.ts';
import { openClickHouseDriver } from '../../src/drivers/clickhouse/clickhouse-driver.ts';
import { ClickHouseUnreachableError } from '../../src/drivers/clickhouse/wait-for-clickhouse.ts';
import { isConnectionError, limitFailure } from '../../src/storage/clickhouse/clickhouse-errors.ts';
import {
  checkClickHouseVersion,
  supportedClickHouseVersion,
} from '../../src/storage/clickhouse/clickhouse-version.ts';
import { API_KEY, startServer, type TestServer } from '../helpers/engine-server.ts';

/**
 * The engine's HTTP connection to ClickHouse, through a proxy in front of the test ClickHouse
 * that can relay, cut an answer half-way or stop listening: a ClickHouse that cannot be reached
 * or breaks the connection is an outage (503, nothing acknowledged), ClickHouse's own refusal
 * is not, sequential queries share pooled connections, and an insert larger than the fetch
 * standard lets a `keepalive` request carry goes through.
 */

const url = inject('clickhouseUrl');
const password = inject('clickhousePassword');
const direct = createClient({ url, password });
afterAll(() => direct.close());

/** The fetch standard's cap on the body of a `keepalive` request, which browsers enforce. */
const KEEPALIVE_BODY_CAP = 64 * 1024;

interface Proxy {
  url: string;
  /** `cut`: answers 200 and part of a body, then destroys the connection. */
  mode: 'relay' | 'cut';
  /**
   * How many of the next requests lose their connection before any answer: `request`, before
   * reaching ClickHouse (a pooled connection closed as the request went out); `answer`, after
   * ClickHouse has run it.
   */
  lose: { where: 'request' | 'answer'; count: number };
  /** Requests whose connection the proxy closed unanswered so far. */
  lost: number;
  /** TCP connections accepted so far. */
  connections: number;
  /** Requests being relayed now, and the most at once so far. */
  active: number;
  peak: number;
  /** Bytes of each request body relayed, with its `query` parameter. */
  bodies: Array<{ query: string; bytes: number }>;
  /** When set, `version()` is answered with this text instead of being relayed. */
  version?: string;
  /** Stops listening and drops every connection: from now on, connecting is refused. */
  stop(): Promise<void>;
}

/** Starts the proxy on `port` (default: a free one). */
async function startProxy(port = 0): Promise<Proxy> {
  const state: Proxy = {
    url: '',
    mode: 'relay',
    lose: { where: 'request', count: 0 },
    lost: 0,
    connections: 0,
    active: 0,
    peak: 0,
    bodies: [],
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const target = new URL(req.url ?? '/', url);
    if (state.mode === 'cut') {
      res.writeHead(200, { 'Content-Type': 'application/json; charset=UTF-8' });
      res.write('["partial');
      setTimeout(() => req.socket.destroy(), 10);
      return;
    }
    const lose = state.lose.count > 0 ? state.lose.where : undefined;
    if (lose) state.lose.count--;
    if (lose === 'request') {
      state.lost++;
      req.socket.destroy();
      return;
    }
    // The statement is in the `query` parameter, or leads the body (an insert's text rows).
    const query = target.searchParams.get('query') ?? body.subarray(0, 200).toString();
    if (state.version !== undefined && query.includes('version()')) {
      // ClickHouse's answer to `SELECT version() AS v` in JSONEachRow, from an older server.
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson; charset=UTF-8' });
      res.end(`${JSON.stringify({ v: state.version })}\n`);
      return;
    }
    state.bodies.push({ query, bytes: body.length });
    state.peak = Math.max(state.peak, ++state.active);
    res.once('close', () => state.active--);
    const upstream = request(target, { method: req.method, headers: req.headers }, (answer) => {
      if (lose === 'answer') {
        answer.resume();
        answer.once('end', () => {
          state.lost++;
          req.socket.destroy();
        });
        return;
      }
      res.writeHead(answer.statusCode ?? 500, answer.headers);
      answer.pipe(res);
    });
    upstream.end(body);
  });
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function countIn(database: string, collection: string): Promise<number> {
  const result = await direct.query({
    query: `SELECT count() AS c FROM {db:Identifier}._engine_events WHERE collection = {c:String}`,
    query_params: { db: database, c: collection },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ c: string }>();
  return Number(row?.c);
}

/** What a query through a client of the engine's throws, or undefined. */
async function failureOf(client: ReturnType<typeof connectClickHouse>): Promise<unknown> {
  try {
    const result = await client.query({ query: 'SELECT 1', format: 'JSONEachRow' });
    await result.json();
    return undefined;
  } catch (error) {
    return error;
  }
}

describe("the classification of the client's failures", () => {
  let proxy: Proxy;
  beforeAll(async () => {
    proxy = await startProxy();
  });
  afterAll(() => proxy.stop().catch(() => undefined));

  test('a ClickHouse that answers is no connection failure, its refusals neither', async () => {
    const client = connectClickHouse({ url: proxy.url, password }, { requestTimeoutMs: 5_000 });
    expect(await failureOf(client)).toBeUndefined();
    const refused = await client.query({ query: 'SELECT nope' }).catch((error) => error);
    expect(refused).toMatchObject({ type: 'UNKNOWN_IDENTIFIER' });
    expect(isConnectionError(refused)).toBe(false);
    const wrong = connectClickHouse(
      { url: proxy.url, password: 'not-it' },
      { requestTimeoutMs: 5_000 },
    );
    const denied = await failureOf(wrong);
    expect(denied).toMatchObject({ type: 'AUTHENTICATION_FAILED' });
    expect(isConnectionError(denied)).toBe(false);
  });

  test('a connection broken half-way through the answer is one', async () => {
    proxy.mode = 'cut';
    try {
      const client = connectClickHouse({ url: proxy.url, password }, { requestTimeoutMs: 5_000 });
      const error = await failureOf(client);
      expect(error).toBeInstanceOf(Error);
      expect(isConnectionError(error)).toBe(true);
    } finally {
      proxy.mode = 'relay';
    }
  });

  test('a request whose connection closes before any answer is sent once more, and only once', async () => {
    const client = connectClickHouse({ url: proxy.url, password }, { requestTimeoutMs: 5_000 });
    onTestFinished(() => client.close());
    const lostBefore = proxy.lost;
    proxy.lose = { where: 'request', count: 1 };
    const result = await client.query({ query: 'SELECT 41 + 1 AS n', format: 'JSONEachRow' });
    expect(await result.json()).toEqual([{ n: 42 }]);
    expect(proxy.lost - lostBefore).toBe(1);

    // Closed again on the second try: the failure is the caller's, after two requests.
    proxy.lose = { where: 'request', count: 5 };
    try {
      const error = await failureOf(client);
      expect(isConnectionError(error)).toBe(true);
      expect(proxy.lose.count).toBe(3);
    } finally {
      proxy.lose = { where: 'request', count: 0 };
    }
  });

  test('a refused connection is one', async () => {
    const client = connectClickHouse({ url: proxy.url, password }, { requestTimeoutMs: 5_000 });
    await proxy.stop();
    const error = await failureOf(client);
    expect(error).toBeInstanceOf(Error);
    expect(isConnectionError(error)).toBe(true);
  });

  test("the client's own time limit is not one", async () => {
    // A listening socket that never answers: only the client's time limit ends the request.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const client = connectClickHouse(
        { url: `http://127.0.0.1:${port}`, password },
        { requestTimeoutMs: 200 },
      );
      const error = await failureOf(client);
      expect(error).toBeInstanceOf(Error);
      expect(isConnectionError(error)).toBe(false);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});

test('an exception ClickHouse appends to a streamed answer fails the read with its type', async () => {
  // ClickHouse 25.11 and later, after rows already sent: the tag from the headers, the message,
  // its length (with its newline) and the tag again (the form the client's stream reads).
  const tag = 'q8ZkR2xvT0bq3N1w';
  const message =
    'Code: 159. DB::Exception: Timeout exceeded: elapsed 1.2 seconds, maximum: 1. (TIMEOUT_EXCEEDED) (version 25.11.1.1)';
  const rows = '[1,"a"]\n[2,"b"]\n';
  const tail = `\r\n__exception__\r\n${tag}\n${message}\n${Buffer.byteLength(message) + 1} ${tag}\r\n__exception__\r\n`;
  let body = rows;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'X-ClickHouse-Exception-Tag': tag });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client = connectClickHouse(
    { url: `http://127.0.0.1:${port}`, password },
    { requestTimeoutMs: 5_000 },
  );
  onTestFinished(async () => {
    await client.close();
    server.closeAllConnections();
    server.close();
  });
  const run = { client, database: 'default', now: 0, timeoutMs: 5_000, memoryLimit: '1GB' };
  const statement = { sql: 'SELECT 1', params: {}, text: [1], parts: [] };
  expect(await readRows(run, statement)).toEqual([
    [1, 'a'],
    [2, 'b'],
  ]);
  body = rows + tail;
  const error = await readRows(run, statement).catch((e: unknown) => e);
  expect(error).toMatchObject({ type: 'TIMEOUT_EXCEEDED' });
  expect(limitFailure(error)).toBe('timed-out');
});

describe('an engine whose ClickHouse connection fails', () => {
  let proxy: Proxy;
  let server: TestServer;
  beforeAll(async () => {
    proxy = await startProxy();
    server = await startServer({
      now: () => 1_700_000_000,
      clickhouse: { url: proxy.url, password, databasePrefix: 'conn_' },
    });
  });
  afterAll(async () => {
    await server?.close();
    await proxy?.stop().catch(() => undefined);
  });

  test('answers sequential queries over pooled connections, not one each', async () => {
    const before = proxy.connections;
    for (let i = 0; i < 30; i++) {
      const answer = await server.post('/api/collections', { api_key: API_KEY });
      expect(answer.status).toBe(200);
    }
    // undici opens a second connection while the first is still being released, then
    // alternates between them.
    expect(proxy.connections - before).toBeLessThanOrEqual(2);
  });

  test('keeps at most MAX_OPEN_REQUESTS requests open however many queries run at once', async () => {
    const client = connectClickHouse({ url: proxy.url, password }, { requestTimeoutMs: 30_000 });
    onTestFinished(() => client.close());
    const before = proxy.connections;
    proxy.peak = 0;
    const answers = await Promise.all(
      Array.from({ length: 4 * MAX_OPEN_REQUESTS }, async (_, i) => {
        const result = await client.query({ query: `SELECT ${i} AS n`, format: 'JSONEachRow' });
        return (await result.json<{ n: number }>())[0]?.n;
      }),
    );
    expect(answers).toEqual(answers.map((_, i) => i));
    expect(proxy.peak).toBeGreaterThan(1);
    expect(proxy.peak).toBeLessThanOrEqual(MAX_OPEN_REQUESTS);
    // undici may open a connection while another is being handed back, but not one a query.
    expect(proxy.connections - before).toBeLessThan(2 * MAX_OPEN_REQUESTS);
  });

  test('stores a batch whose insert is larger than a keepalive fetch may carry', async () => {
    // Node's fetch does not enforce the cap; browsers and the standard do, so this one does.
    const platformFetch = globalThis.fetch;
    globalThis.fetch = (input, init) =>
      init?.keepalive && Buffer.byteLength(String(init.body ?? '')) > KEEPALIVE_BODY_CAP
        ? Promise.reject(new TypeError('a keepalive request body is capped at 64 KiB'))
        : platformFetch(input, init);
    onTestFinished(() => {
      globalThis.fetch = platformFetch;
    });
    const jsons = Array.from({ length: 1_000 }, (_, i) => ({ i, pad: 'x'.repeat(200) }));
    const answer = await server.post('/api/bulk-log', {
      api_key: API_KEY,
      collection: 'large',
      jsons,
    });
    expect(answer).toMatchObject({ status: 200, body: { ok: true, count: 1_000 } });
    expect(await countIn('conn_default', 'large')).toBe(1_000);
    const insert = proxy.bodies.find((b) =>
      b.query.startsWith('INSERT INTO `conn_default`.`_engine_events`'),
    );
    expect(insert?.bytes).toBeGreaterThan(KEEPALIVE_BODY_CAP);
  });

  test('answers a query whose pooled connection was closed under it, from a second request', async () => {
    const lostBefore = proxy.lost;
    proxy.lose = { where: 'request', count: 1 };
    const answer = await server.post('/api/collections', { api_key: API_KEY });
    expect(proxy.lost - lostBefore).toBe(1);
    const catalog = await direct.query({
      query: 'SELECT DISTINCT name FROM conn_default._engine_collections ORDER BY name',
      format: 'JSONEachRow',
    });
    const names = await catalog.json<{ name: string }>();
    expect(names.map((n) => n.name)).toContain('large');
    expect(answer).toMatchObject({ status: 200, body: { list: names } });
  });

  test('stores an event once when the answer to its insert is lost and the insert is sent again', async () => {
    const before = await countIn('conn_default', 'large');
    const lostBefore = proxy.lost;
    proxy.lose = { where: 'answer', count: 1 };
    const log = await server.post('/api/log', {
      api_key: API_KEY,
      collection: 'large',
      json: { i: 'answer lost' },
    });
    expect(log.status).toBe(200);
    expect(proxy.lost - lostBefore).toBe(1);
    expect(await countIn('conn_default', 'large')).toBe(before + 1);
  });

  test('answers 503 while answers are cut half-way, and acknowledges no event', async () => {
    const before = await countIn('conn_default', 'large');
    proxy.mode = 'cut';
    try {
      const query = await server.post('/api/visualize/data', {
        api_key: API_KEY,
        collection: 'large',
        graph_type: 'Single Value',
        start: 1_699_990_000,
        end: 1_700_000_001,
      });
      expect(query).toEqual({
        status: 503,
        body: { error: 'the storage is unavailable; try again' },
        text: expect.any(String),
      });
      const log = await server.post('/api/log', {
        api_key: API_KEY,
        collection: 'large',
        json: { i: -1 },
      });
      expect(log.status).toBe(503);
    } finally {
      proxy.mode = 'relay';
    }
    expect(await countIn('conn_default', 'large')).toBe(before);
  });

  test('answers 503 once ClickHouse refuses connections, and acknowledges no event', async () => {
    const before = await countIn('conn_default', 'large');
    await proxy.stop();
    const query = await server.post('/api/collections', { api_key: API_KEY });
    expect(query).toMatchObject({
      status: 503,
      body: { error: 'the storage is unavailable; try again' },
    });
    const bulk = await server.post('/api/bulk-log', {
      api_key: API_KEY,
      collection: 'large',
      jsons: [{ i: -2 }],
    });
    expect(bulk.status).toBe(503);
    expect(await countIn('conn_default', 'large')).toBe(before);
  });
});

describe('the ClickHouse version an engine needs', () => {
  test('releases before 24.4 are refused, 24.4 and later taken (minor versions compared as numbers)', () => {
    const releases: Array<[string, boolean]> = [
      ['23.8.16.40', false],
      ['24.3.5.47', false],
      ['24.4.1.2088', true],
      ['24.10.1.2812', true],
      ['25.3.2.39', true],
      ['26.7.1.1', true],
      ['9.12.1', false],
      ['100.1.1', true],
    ];
    for (const [version, supported] of releases)
      expect([version, supportedClickHouseVersion(version)]).toEqual([version, supported]);
  });

  test('the test server is new enough', async () => {
    await expect(checkClickHouseVersion(direct)).resolves.toBeUndefined();
  });

  test('an engine on an older server stops with a sentence before creating anything', async () => {
    const proxy = await startProxy();
    onTestFinished(() => proxy.stop());
    proxy.version = '23.8.16.40';
    await expect(
      openClickHouseDriver(
        { url: proxy.url, password, databasePrefix: 'old_' },
        { workspaces: ['w'], memoryLimit: '1GB', requestTimeoutMs: 10_000 },
      ),
    ).rejects.toThrow('ClickHouse 24.4 or newer is needed; this server is 23.8.16.40');
    const result = await direct.query({
      query: `SELECT count() AS c FROM system.databases WHERE name = 'old_w'`,
      format: 'JSONEachRow',
    });
    expect(await result.json()).toEqual([{ c: '0' }]);
  });
});

describe('an engine opening before its ClickHouse can be reached', () => {
  const logged: string[] = [];
  const driverOptions = {
    workspaces: ['w'],
    memoryLimit: '1GB',
    requestTimeoutMs: 10_000,
    log: (sentence: string) => logged.push(sentence),
  };
  /** A loopback URL where nothing listens (until the test listens there itself). */
  async function closedUrl(): Promise<{ url: string; port: number }> {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    // As the sentences show it: `new URL()`'s form, with its path.
    return { url: `http://127.0.0.1:${port}/`, port };
  }

  test('waits for one that starts late, says so once, then opens on it', async () => {
    logged.length = 0;
    const { url: late, port } = await closedUrl();
    // ClickHouse starts listening a second after the engine first tries it.
    const listening = new Promise<Proxy>((resolve, reject) =>
      setTimeout(() => startProxy(port).then(resolve, reject), 1_000),
    );
    onTestFinished(async () => (await listening).stop());
    const started = Date.now();
    const driver = await openClickHouseDriver(
      { url: late, password, databasePrefix: 'late_', startupWaitMs: 20_000 },
      driverOptions,
    );
    await driver.close();
    await listening;
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(logged).toEqual([`waiting for ClickHouse at ${late}: connection refused`]);
    const result = await direct.query({
      query: `SELECT count() AS c FROM system.databases WHERE name = 'late_w'`,
      format: 'JSONEachRow',
    });
    expect(await result.json()).toEqual([{ c: '1' }]);
  });

  test('fails with a sentence naming the URL and why, once the wait is over', async () => {
    logged.length = 0;
    const { url: nowhere } = await closedUrl();
    const started = Date.now();
    const error = await openClickHouseDriver(
      { url: nowhere, password, startupWaitMs: 1_500 },
      driverOptions,
    ).catch((e: unknown) => e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(error).toBeInstanceOf(ClickHouseUnreachableError);
    expect((error as Error).message).toBe(
      `ClickHouse at ${nowhere} could not be reached: connection refused (tried for 1 s)`,
    );
    expect(logged).toEqual([`waiting for ClickHouse at ${nowhere}: connection refused`]);
  });

  test('with no wait, tries once; a ClickHouse that does not answer is named too', async () => {
    logged.length = 0;
    const { url: nowhere, port } = await closedUrl();
    const started = Date.now();
    // A library caller's URL holding a user and password: the sentence names neither.
    const error = await openClickHouseDriver(
      { url: `http://analyst:s3cret-pass@127.0.0.1:${port}`, password, startupWaitMs: 0 },
      driverOptions,
    ).catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      `ClickHouse at ${nowhere} could not be reached: connection refused`,
    );
    expect(Date.now() - started).toBeLessThan(1_000);
    // A listening socket that never answers: the request's own time limit ends each attempt.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => {
      silent.closeAllConnections();
      silent.close();
    });
    const mute = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
    await expect(
      openClickHouseDriver(
        { url: mute, password, startupWaitMs: 0 },
        { ...driverOptions, requestTimeoutMs: 200 },
      ),
    ).rejects.toThrow(
      `ClickHouse at ${mute} could not be reached: no answer within the request time limit`,
    );
    expect(logged).toEqual([]);
  });

  test("does not wait out ClickHouse's own refusal: a wrong password fails at once", async () => {
    logged.length = 0;
    const started = Date.now();
    const error = await openClickHouseDriver(
      { url, password: 'not-the-password', startupWaitMs: 20_000 },
      driverOptions,
    ).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(ClickHouseUnreachableError);
    expect(logged).toEqual([]);
  });
});
