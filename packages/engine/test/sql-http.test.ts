import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { READ_ONLY_SQL } from '@analytics-chart/protocol';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createEngine, type Engine, serveEngine } from '../src/index.ts';
import {
  CATALOG_REFUSED,
  FILE_ACCESS_REFUSED,
  QUERY_TIMED_OUT,
  RESULT_TOO_LARGE,
} from '../src/sql-mode/duckdb/index.ts';
import { CANARIES, EVENTS, NOW, unix } from './sql-fixtures/workspaces.ts';

/**
 * SQL mode end to end: a real engine (storage, ingest, HTTP app) served on 127.0.0.1, events
 * ingested through `POST /api/log`, SQL sent to `POST /api/visualize/data` over real sockets.
 * Workspace `b` and a file in the data directory hold canaries no answer of workspace `a` may
 * contain, and the engine keeps answering other requests while a heavy query runs.
 */

const KEY_A = 'key-a-0123456789abcdef';
const KEY_B = 'key-b-fedcba9876543210';
// Long enough that a busy machine still builds the 40 MB result below before it, short enough
// that the unbounded queries' time-outs cost little.
const TIME_LIMIT_MS = 3000;

let dataDir: string;
let canaryFile: string;
let engine: Engine;
let url: string;
let stop: () => Promise<void>;
const internalErrors: string[] = [];

interface Reply {
  status: number;
  type: string | null;
  text: string;
  body: { result?: unknown[]; metadata?: Record<string, unknown>; error?: string };
}

async function post(path: string, body: unknown): Promise<Reply> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    text,
    body: JSON.parse(text),
  };
}

function sql(query: string, extra: Record<string, unknown> = {}, key = KEY_A): Promise<Reply> {
  return post('/api/visualize/data', {
    api_key: key,
    sql_query: query,
    graph_type: 'Table',
    ...extra,
  });
}

function expectNothingLeaked(reply: Reply) {
  expect(reply.type).toMatch(/^application\/json/);
  for (const canary of Object.values(CANARIES)) expect(reply.text).not.toContain(canary);
  expect(reply.text).not.toContain(dataDir);
  expect(reply.text).not.toContain(KEY_A);
  expect(reply.text).not.toContain(KEY_B);
  expect(reply.text).not.toMatch(/LINE \d+:|\n\s+at /);
}

beforeAll(async () => {
  process.env.ANALYTICS_API_KEY = CANARIES.environment;
  dataDir = mkdtempSync(join(tmpdir(), 'sql-http-'));
  canaryFile = join(dataDir, 'secret.csv');
  writeFileSync(canaryFile, `secret\n${CANARIES.file}\n`);
  engine = await createEngine({
    dataDir,
    workspaces: { a: KEY_A, b: KEY_B },
    now: () => NOW,
    sqlTimeoutMs: TIME_LIMIT_MS,
    memoryLimit: '512MB',
    // No body here is past the inline limit: no body workers.
    bodyWorkers: 0,
    logError: (message) => internalErrors.push(message),
  });
  const served = await serveEngine({ engine, port: 0, host: '127.0.0.1' });
  url = served.url;
  stop = served.close;
  for (const event of EVENTS) {
    const reply = await post('/api/log', {
      api_key: KEY_A,
      collection: event.collection,
      timestamp: unix(event.at),
      json: event.json,
    });
    expect(reply.status).toBe(200);
  }
  const other = await post('/api/log', {
    api_key: KEY_B,
    timestamp: NOW - 60,
    json: { secret: CANARIES.otherWorkspace },
  });
  expect(other.status).toBe(200);
});

afterAll(async () => {
  await stop?.();
  await engine?.close();
  delete process.env.ANALYTICS_API_KEY;
  rmSync(dataDir, { recursive: true, force: true });
});

describe('SQL mode over HTTP', () => {
  test('a count per action_id over the last 30 days returns the right rows', async () => {
    const reply = await sql(
      `SELECT JSONExtractString(json,'action_id') AS action_id, count(*) AS c FROM base WHERE timestamp > toUnixTimestamp(now()) - 86400*30 GROUP BY action_id ORDER BY c DESC, action_id`,
      { graph_type: 'Bar Chart', label_column: 'action_id', value_column: 'c' },
    );
    expect(reply.status).toBe(200);
    // all_events after 2024-02-08 16:00 UTC: click x3, purchase x2, signup x2 (January is out).
    expect(reply.body).toEqual({
      result: [
        { action_id: 'click', c: 3 },
        { action_id: 'purchase', c: 2 },
        { action_id: 'signup', c: 2 },
      ],
      metadata: { truncated: false },
    });
    expectNothingLeaked(reply);
  });

  test('Single Line and Multi Line shapes, labelled in the request zone', async () => {
    const line = await sql(
      'SELECT toStartOfDay(timestamp) AS day, count(*) AS n FROM all_events GROUP BY 1',
      {
        graph_type: 'Single Line',
        timestamp_column: 'day',
        value_column: 'n',
        IANA_time_zone: 'UTC',
      },
    );
    expect(line.body).toEqual({
      result: [
        { timestamp: '2024-01-15', n: 1 },
        { timestamp: '2024-03-01', n: 3 },
        { timestamp: '2024-03-02', n: 1 },
        { timestamp: '2024-03-05', n: 1 },
        { timestamp: '2024-03-09', n: 2 },
      ],
      metadata: { truncated: false, granularity: 'Day' },
    });
    const multi = await sql(
      `SELECT toStartOfMonth(timestamp) AS m, JSONExtractString(json, 'action_id') AS a, count(*) AS n
       FROM all_events GROUP BY ALL`,
      { graph_type: 'Stacked Line', timestamp_column: 'm', value_column: 'n', split_column: 'a' },
    );
    // January: one click. March: clicks 3, signups 2, purchases 2; totals click 4, then the
    // ties purchase and signup in name order.
    expect(multi.body).toEqual({
      result: [
        { timestamp: '2024-01', click: 1, purchase: null, signup: null },
        { timestamp: '2024-03', click: 3, purchase: 2, signup: 2 },
      ],
      metadata: { truncated: false, granularity: 'Month', series: ['click', 'purchase', 'signup'] },
    });
  });

  test('each workspace sees only its own collections', async () => {
    const mine = await sql('SELECT count(*) AS n FROM all_events');
    expect(mine.body.result).toEqual([
      { n: EVENTS.filter((e) => e.collection === 'all_events').length },
    ]);
    const theirs = await sql('SELECT json FROM all_events', {}, KEY_B);
    expect(theirs.body.result).toEqual([
      { json: JSON.stringify({ secret: CANARIES.otherWorkspace }) },
    ]);
    const signups = await sql('SELECT count(*) AS n FROM signups', {}, KEY_B);
    expect(signups.body.result).toEqual([{ n: 0 }]);
  });

  test('a wrong key is refused before any SQL runs', async () => {
    const reply = await sql('SELECT 1', {}, 'not-a-key');
    expect(reply).toMatchObject({ status: 400, body: { error: 'Invalid API KEY' } });
  });
});

describe('hostile SQL over HTTP', () => {
  const otherFile = () => join(dataDir, 'b.duckdb');
  const attacks: Array<[string, () => string, number, string]> = [
    ['DROP TABLE', () => 'DROP TABLE all_events', 400, READ_ONLY_SQL],
    ['DELETE', () => 'DELETE FROM all_events', 400, READ_ONLY_SQL],
    ['INSERT', () => `INSERT INTO all_events VALUES (1, '{}')`, 400, READ_ONLY_SQL],
    ['UPDATE', () => `UPDATE all_events SET json = '{}'`, 400, READ_ONLY_SQL],
    ['CREATE', () => 'CREATE TABLE t (x INTEGER)', 400, READ_ONLY_SQL],
    ['ALTER', () => 'ALTER TABLE all_events RENAME TO x', 400, READ_ONLY_SQL],
    [
      'COPY out',
      () => `COPY (SELECT * FROM all_events) TO '${join(dataDir, 'x.csv')}'`,
      400,
      READ_ONLY_SQL,
    ],
    ['ATTACH the other workspace', () => `ATTACH '${otherFile()}' AS b`, 400, READ_ONLY_SQL],
    ['DETACH', () => 'DETACH a', 400, READ_ONLY_SQL],
    ['INSTALL', () => 'INSTALL httpfs', 400, READ_ONLY_SQL],
    ['LOAD', () => 'LOAD httpfs', 400, READ_ONLY_SQL],
    ['PRAGMA', () => 'PRAGMA database_list', 400, READ_ONLY_SQL],
    ['SET', () => "SET memory_limit = '100GB'", 400, READ_ONLY_SQL],
    ['CALL', () => 'CALL pragma_version()', 400, READ_ONLY_SQL],
    ['EXPORT', () => `EXPORT DATABASE '${join(dataDir, 'dump')}'`, 400, READ_ONLY_SQL],
    ['IMPORT', () => `IMPORT DATABASE '${join(dataDir, 'dump')}'`, 400, READ_ONLY_SQL],
    ['CHECKPOINT', () => 'CHECKPOINT', 400, READ_ONLY_SQL],
    ['; smuggling', () => 'SELECT 1; DROP TABLE all_events', 400, READ_ONLY_SQL],
    [
      "the other workspace's file by path",
      () => `SELECT * FROM '${otherFile()}'`,
      400,
      FILE_ACCESS_REFUSED,
    ],
    [
      'read_duckdb of the other workspace',
      () => `SELECT * FROM read_duckdb('${otherFile()}')`,
      400,
      FILE_ACCESS_REFUSED,
    ],
    [
      'read_text of a file in the data directory',
      () => `SELECT * FROM read_text('${canaryFile}')`,
      400,
      FILE_ACCESS_REFUSED,
    ],
    [
      'read_csv of /etc/passwd',
      () => `SELECT * FROM read_csv('/etc/passwd')`,
      400,
      FILE_ACCESS_REFUSED,
    ],
    [
      'glob of the data directory',
      () => `SELECT * FROM glob('${dataDir}/*')`,
      400,
      FILE_ACCESS_REFUSED,
    ],
    ['information_schema', () => 'SELECT * FROM information_schema.tables', 400, CATALOG_REFUSED],
    [
      'the other workspace by catalog',
      () => 'SELECT * FROM b.main.all_events',
      400,
      CATALOG_REFUSED,
    ],
    [
      'duckdb_databases()',
      () => 'SELECT * FROM duckdb_databases()',
      400,
      'Table function duckdb_databases() is not available in SQL mode; query your collections by name',
    ],
    [
      "getenv('ANALYTICS_API_KEY')",
      () => `SELECT getenv('ANALYTICS_API_KEY')`,
      400,
      'getenv() is not available in SQL mode',
    ],
    [
      'current_setting of a path',
      () => `SELECT current_setting('temp_directory')`,
      400,
      'current_setting() is not available in SQL mode',
    ],
    [
      'a huge cross join',
      () => 'SELECT count(*) FROM range(1000000000) a, range(1000000000) b',
      504,
      QUERY_TIMED_OUT,
    ],
    [
      'a result too large',
      () => `SELECT repeat('x', 20000) AS x FROM range(2000)`,
      400,
      RESULT_TOO_LARGE,
    ],
  ];

  for (const [name, query, status, error] of attacks) {
    test(name, async () => {
      const reply = await sql(query());
      expect(reply.status).toBe(status);
      expect(reply.body).toEqual({ error });
      expectNothingLeaked(reply);
    });
  }

  test('the engine keeps serving ingest, collection mode and SQL while a heavy query runs', async () => {
    const finished: string[] = [];
    const heavy = sql('SELECT count(*) FROM range(1000000000) a, range(1000000000) b').then((r) => {
      finished.push('heavy');
      return r;
    });
    const ingest = await post('/api/log', {
      api_key: KEY_A,
      collection: 'during_heavy',
      timestamp: NOW - 10,
      json: { ok: true },
    });
    const collectionMode = await post('/api/visualize/data', {
      api_key: KEY_A,
      graph_type: 'Single Value',
      start: '7 days ago',
      end: 'now',
    });
    const light = await sql('SELECT count(*) AS n FROM during_heavy');
    finished.push('others');
    expect(ingest.status).toBe(200);
    expect(collectionMode.status).toBe(200);
    expect(light.body.result).toEqual([{ n: 1 }]);
    const heavyReply = await heavy;
    expect(heavyReply.status).toBe(504);
    expect(heavyReply.body).toEqual({ error: QUERY_TIMED_OUT });
    expect(finished).toEqual(['others', 'heavy']);
  });

  test('afterwards the data is intact, the file untouched, no internal error logged', async () => {
    const count = await sql('SELECT count(*) AS n FROM all_events');
    expect(count.status).toBe(200);
    expect(count.body.result).toEqual([
      { n: EVENTS.filter((e) => e.collection === 'all_events').length },
    ]);
    const theirs = await sql('SELECT count(*) AS n FROM all_events', {}, KEY_B);
    expect(theirs.body.result).toEqual([{ n: 1 }]);
    expect(readFileSync(canaryFile, 'utf8')).toContain(CANARIES.file);
    expect(internalErrors).toEqual([]);
  });
});
