import { READ_ONLY_SQL } from '@analytics-chart/protocol';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import {
  SERVER_ERROR_CODES,
  TIME_LIMIT_CODES,
  USER_ERROR_CODES,
} from '../../src/sql-mode/clickhouse/clickhouse-sql-mode.ts';
import { OUT_OF_MEMORY, RESULT_TOO_LARGE } from '../../src/sql-mode/result-limits.ts';
import {
  type Answer,
  API_KEY,
  ingest,
  startServer,
  type TestServer,
} from '../helpers/engine-server.ts';

/**
 * SQL mode on the ClickHouse driver: ClickHouse's dialect run natively, and the lock-down that
 * ClickHouse enforces (readonly=1, limits as settings) plus the engine's check of ClickHouse's
 * own parse. A canary in the other workspace must never appear in an answer.
 */

const OTHER_KEY = 'other-key-9876543210';
const CANARY = 'canary-of-the-other-workspace';
const PREFIX = 'sqlmode_';
let server: TestServer;
/** What the engine logged: a user's mistake is not our error, and is never logged. */
const logged: string[] = [];
const EVENTS = Array.from({ length: 30 }, (_, i) => ({
  timestamp: 1_700_000_000 + i * 60,
  json: { country: ['US', 'GB', 'DE'][i % 3] as string, price: i },
}));

beforeAll(async () => {
  server = await startServer({
    sqlTimeoutMs: 1000,
    logError: (message, error) => logged.push(`${message} ${String(error)}`),
    clickhouse: {
      url: inject('clickhouseUrl'),
      password: inject('clickhousePassword'),
      databasePrefix: PREFIX,
    },
  });
  await ingest(server, EVENTS);
  await ingest(
    server,
    [{ timestamp: 1_700_000_000, json: { secret: CANARY } }],
    'all_events',
    OTHER_KEY,
  );
}, 60_000);

afterAll(async () => {
  await server?.close();
});

async function sql(sql_query: string, extra: Record<string, unknown> = {}): Promise<Answer> {
  const answer = await server.post('/api/visualize/data', {
    api_key: API_KEY,
    sql_query,
    graph_type: 'Table',
    ...extra,
  });
  expect(answer.text).not.toContain(CANARY);
  expect(answer.text).not.toMatch(
    /Code: \d+|DB::Exception|\(version |in scope|TabSeparated|EXPLAIN/i,
  );
  // Refusals never quote the query back.
  if (answer.status !== 200) expect(answer.text).not.toContain(sql_query.slice(0, 12));
  return answer;
}

describe('SQL mode on ClickHouse answers', () => {
  test('a Table in ClickHouse dialect over a collection', async () => {
    const answer = await sql(
      `SELECT JSONExtractString(json, 'country') AS country, count() AS n, sum(JSONExtractInt(json, 'price')) AS total
       FROM all_events GROUP BY country ORDER BY country`,
    );
    expect(answer.status).toBe(200);
    const expected = ['DE', 'GB', 'US'].map((country) => {
      const mine = EVENTS.filter((e) => e.json.country === country);
      return { country, n: mine.length, total: mine.reduce((s, e) => s + e.json.price, 0) };
    });
    expect(answer.body).toEqual({
      result: expected,
      metadata: { truncated: false, columns: ['country', 'n', 'total'] },
    });
  });

  test('FROM base reads all_events, and the request zone is the session time zone', async () => {
    const answer = await sql(
      `SELECT count() AS n, toString(toStartOfDay(toDateTime(min(timestamp)))) AS day FROM base`,
      { IANA_time_zone: 'Asia/Tokyo' },
    );
    // 1_700_000_000 is 2023-11-15 07:13:20 in Tokyo.
    expect(answer.body.result).toEqual([{ n: EVENTS.length, day: '2023-11-15 00:00:00' }]);
  });

  test('a Bar Chart maps label and value columns', async () => {
    const answer = await sql(
      `SELECT JSONExtractString(json, 'country') AS c, count() AS n FROM all_events GROUP BY c ORDER BY c`,
      { graph_type: 'Bar Chart', label_column: 'c', value_column: 'n' },
    );
    expect(answer.status).toBe(200);
    expect(answer.body.result).toEqual([
      { c: 'DE', n: 10 },
      { c: 'GB', n: 10 },
      { c: 'US', n: 10 },
    ]);
  });

  test('at most 2,000 rows, with truncated set', async () => {
    const answer = await sql('SELECT number FROM numbers(5000)');
    expect(answer.status).toBe(200);
    expect(answer.body.result).toHaveLength(2000);
    expect(answer.body.result[1999]).toEqual({ number: 1999 });
    expect(answer.body.metadata.truncated).toBe(true);
  });

  // EVENTS: 30 events a minute apart from 2023-11-14 22:13:20 UTC, all in that hour.
  test('a Single Line from DateTime buckets, labelled in the request zone', async () => {
    const answer = await sql(
      'SELECT toStartOfHour(toDateTime(timestamp)) AS t, count() AS n FROM all_events GROUP BY t ORDER BY t',
      {
        graph_type: 'Single Line',
        timestamp_column: 't',
        value_column: 'n',
        IANA_time_zone: 'Asia/Tokyo',
      },
    );
    expect(answer.status, answer.text).toBe(200);
    // 22:00 UTC is 07:00 the next day in Tokyo (UTC+9).
    expect(answer.body.result).toEqual([{ timestamp: '2023-11-15 07:00', n: EVENTS.length }]);
  });

  test('a Multi Line split by a column, and a Funnel with its conversion', async () => {
    const multi = await sql(
      `SELECT toDate(toDateTime(timestamp)) AS d, JSONExtractString(json, 'country') AS c, count() AS n
       FROM all_events GROUP BY d, c`,
      {
        graph_type: 'Multi Line',
        timestamp_column: 'd',
        split_column: 'c',
        value_column: 'n',
        IANA_time_zone: 'UTC',
      },
    );
    expect(multi.status, multi.text).toBe(200);
    expect(multi.body.result).toEqual([{ timestamp: '2023-11-14', DE: 10, GB: 10, US: 10 }]);
    expect([...multi.body.metadata.series].sort()).toEqual(['DE', 'GB', 'US']);
    const funnel = await sql(
      `SELECT step, n FROM (SELECT 1 AS o, 'all' AS step, count() AS n FROM all_events
         UNION ALL SELECT 2, 'US', countIf(JSONExtractString(json, 'country') = 'US') FROM all_events
         UNION ALL SELECT 3, 'cheap US', countIf(JSONExtractString(json, 'country') = 'US'
           AND JSONExtractInt(json, 'price') < 15) FROM all_events) ORDER BY o`,
      { graph_type: 'Funnel', label_column: 'step', value_column: 'n' },
    );
    expect(funnel.status, funnel.text).toBe(200);
    const us = EVENTS.filter((e) => e.json.country === 'US');
    const cheap = us.filter((e) => e.json.price < 15);
    expect(funnel.body.result).toEqual([
      { step: 'all', n: EVENTS.length },
      { step: 'US', n: us.length },
      { step: 'cheap US', n: cheap.length },
    ]);
    expect(funnel.body.metadata.conversion).toEqual([
      1,
      us.length / EVENTS.length,
      cheap.length / us.length,
    ]);
  });
});

describe('SQL mode on ClickHouse refuses', () => {
  const readOnly: Record<string, string> = {
    INSERT: `INSERT INTO all_events VALUES (1, '{}')`,
    CREATE: 'CREATE TABLE t (a Int8) ENGINE = Memory',
    DROP: 'DROP TABLE all_events',
    ALTER: 'ALTER TABLE _engine_events DELETE WHERE 1',
    SET: 'SET readonly = 0',
    SYSTEM: 'SYSTEM DROP DNS CACHE',
    OPTIMIZE: 'OPTIMIZE TABLE _engine_events',
    'two statements': 'SELECT 1; DROP TABLE all_events',
  };
  for (const [kind, text] of Object.entries(readOnly)) {
    test(`${kind} as read-only`, async () => {
      const answer = await sql(text);
      expect(answer).toMatchObject({ status: 400, body: { error: READ_ONLY_SQL } });
    });
  }
  const outside: Record<string, string> = {
    'the other workspace': `SELECT json FROM ${PREFIX}other._engine_events`,
    'the other workspace by IN': `SELECT 1 FROM all_events WHERE json IN ${PREFIX}other.all_events`,
    'system tables': 'SELECT name FROM system.tables',
    'a database list': 'SELECT * FROM system.databases',
    information_schema: 'SELECT * FROM information_schema.tables',
  };
  for (const [kind, text] of Object.entries(outside)) {
    test(`reading ${kind}`, async () => {
      const answer = await sql(text);
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatch(/^SQL mode reads only this workspace's collections/);
    });
  }
  const functions: Record<string, RegExp> = {
    "SELECT file('/etc/passwd')": /function 'file' is not available/,
    "SELECT * FROM file('/etc/passwd', 'LineAsString')": /table function 'file'/,
    "SELECT * FROM url('http://127.0.0.1:9/x', 'LineAsString')": /table function 'url'/,
    "SELECT * FROM remote('127.0.0.1', system.one)": /table function 'remote'/,
    "SELECT * FROM merge('sqlmode_other', '.*')": /table function 'merge'/,
    "SELECT joinGet('sqlmode_other.t', 'a', 1)": /function 'joinGet'/,
    "SELECT dictGet('d', 'a', 1)": /function 'dictGet'/,
    "SELECT * FROM s3('http://127.0.0.1:9/b/x.csv')": /table function 's3'/,
    "SELECT * FROM hdfs('hdfs://127.0.0.1:9/x', 'CSV')": /table function 'hdfs'/,
    "SELECT * FROM mysql('127.0.0.1:9', 'd', 't', 'u', 'p')": /table function 'mysql'/,
    "SELECT * FROM postgresql('127.0.0.1:9', 'd', 't', 'u', 'p')": /table function 'postgresql'/,
    "SELECT * FROM cluster('default', system.one)": /table function 'cluster'/,
    "SELECT * FROM executable('x.sh', 'CSV', 'a String')": /table function 'executable'/,
    "SELECT * FROM input('a String')": /table function 'input'/,
    "SELECT * FROM azureBlobStorage('http://127.0.0.1:9', 'c', 'x')":
      /table function 'azureBlobStorage'/,
    "SELECT 1 INTO OUTFILE '/tmp/out.txt'": /no INTO OUTFILE or FORMAT/,
    'SELECT 1 FORMAT JSON': /no INTO OUTFILE or FORMAT/,
  };
  for (const [text, message] of Object.entries(functions)) {
    test(text, async () => {
      const answer = await sql(text);
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatch(message);
    });
  }
  test('changing a setting inside the query, by ClickHouse itself', async () => {
    const answer = await sql('SELECT 1 SETTINGS max_execution_time = 1000');
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatch(/readonly/i);
  });
  test('a query past the time limit is a 504', async () => {
    const answer = await sql('SELECT count() FROM numbers(100000000000)');
    expect(answer).toMatchObject({ status: 504, body: { error: 'Query timed out' } });
  });
  test('errors of the SQL itself are one sentence, without the SQL', async () => {
    const typo = await sql('SELECT countif(1) FROM all_events');
    expect(typo.status).toBe(400);
    expect(typo.body.error).toMatch(
      /^Function with name `countif` does not exist\. Maybe you meant/,
    );
    const syntax = await sql('SELECT (1 FROM all_events');
    expect(syntax).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^Syntax error at position \d+ \(line 1, col \d+\)$/) },
    });
    const column = await sql('SELECT nonexistent_column FROM all_events');
    expect(column.status).toBe(400);
    expect(column.body.error).toMatch(/nonexistent_column/);
  });

  // Errors ClickHouse raises while running the user's own SQL were 500s, logged with a stack,
  // and the edge, which retries 5xx, sent each three times.
  const runtime: Record<string, RegExp> = {
    'SELECT throwIf(1)': /^Value passed to 'throwIf' function is non-zero$/,
    "SELECT throwIf(number = 3, 'three is one too many') FROM numbers(10)":
      /^three is one too many$/,
    'SELECT assumeNotNull(NULL)': /^[A-Z][^\n]*$/,
    'SELECT sleepEachRow(3) FROM numbers(10)': /^The maximum sleep time is/,
    "SELECT toInt32('x')": /^Cannot parse/,
    'SELECT intDiv(1, 0)': /^Division by zero$/,
  };
  for (const [text, message] of Object.entries(runtime)) {
    test(`${text} is a 400 sentence, not logged`, async () => {
      const before = logged.length;
      const answer = await sql(text);
      expect(answer.status, answer.text).toBe(400);
      expect(answer.body.error).toMatch(message);
      expect(answer.body.error).not.toMatch(/while executing|FUNCTION|:: /);
      expect(logged.slice(before)).toEqual([]);
    });
  }
  test('a query that sleeps past the time limit is a 504, not logged', async () => {
    const before = logged.length;
    const answer = await sql('SELECT sleepEachRow(0.3) FROM numbers(10)');
    expect(answer).toMatchObject({ status: 504, body: { error: 'Query timed out' } });
    expect(logged.slice(before)).toEqual([]);
  });

  // Syntax errors whose quoted SQL holds an upper-case word in parentheses, or a NUL: the client
  // took the word for the exception's name (or found none), and these were 500s.
  for (const text of [
    'WITH gone AS (DELETE FROM _engine_events RETURNING *) SELECT * FROM gone',
    `WITH x AS (INSERT INTO all_events VALUES (1, '{}') RETURNING *) SELECT 1`,
    `WITH x AS (SELECT 1) UPDATE all_events SET json = '{}'`,
    'SELECT * FROM all_events\u0000; DROP TABLE all_events',
    'SELECT * FROM other.main.all_events',
  ]) {
    test(`${JSON.stringify(text)} is a 400 sentence`, async () => {
      const answer = await sql(text);
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatch(/^[A-Z]/);
    });
  }

  test("the engine's names of ClickHouse's error codes are ClickHouse's", async () => {
    const codes = { ...USER_ERROR_CODES, ...SERVER_ERROR_CODES, ...TIME_LIMIT_CODES };
    for (const [code, name] of Object.entries(codes)) {
      const answer = await sql(`SELECT toString(errorCodeToName(${Number(code)})) AS n`);
      expect(answer.body.result).toEqual([{ n: name }]);
    }
  });

  test('a result larger than SQL mode returns is refused by ClickHouse', async () => {
    // 2,000 rows of 20,000 characters: 40 MB against max_result_bytes' 32 MB.
    const answer = await sql(`SELECT repeat('x', 20000) AS big FROM numbers(2000)`);
    expect(answer).toMatchObject({ status: 400, body: { error: RESULT_TOO_LARGE } });
  });

  test('afterwards the workspace is unchanged', async () => {
    const answer = await sql('SELECT count() AS n FROM all_events');
    expect(answer.body.result).toEqual([{ n: EVENTS.length }]);
  });
});

describe('SQL mode on ClickHouse within its memory limit', () => {
  let small: TestServer;
  beforeAll(async () => {
    small = await startServer({
      memoryLimit: '64MB',
      sqlTimeoutMs: 20_000,
      clickhouse: {
        url: inject('clickhouseUrl'),
        password: inject('clickhousePassword'),
        databasePrefix: 'sqlmemory_',
      },
    });
  });
  afterAll(() => small?.close());

  test('a query that needs more is a 400 with the DuckDB driver sentence', async () => {
    // About 2 GB of strings against max_memory_usage of 64 MB.
    const answer = await small.post('/api/visualize/data', {
      api_key: API_KEY,
      graph_type: 'Table',
      sql_query: `SELECT length(groupArray(repeat('x', 1000))) AS n FROM numbers(2000000)`,
    });
    expect(answer).toMatchObject({ status: 400, body: { error: OUT_OF_MEMORY } });
  });
});
