import { parseQueryRequest } from '@analytics-chart/protocol';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RAW_PARAMETERS_REFUSED } from '../src/sql-mode/duckdb/index.ts';
import { ON_CLICKHOUSE } from './helpers/driver.ts';
import { answer, tableRows } from './sql-fixtures/answer.ts';
import { EVENTS, openSqlTestBed, type SqlTestBed, unix } from './sql-fixtures/workspaces.ts';

/**
 * Typed SQL parameters: `{name:Type}` placeholders bound as DuckDB prepared-statement
 * parameters, or by ClickHouse's own binder on the ClickHouse driver. Expected counts are
 * computed from the fixture events, not written down.
 */

let bed: SqlTestBed;
beforeAll(async () => {
  bed = await openSqlTestBed();
});
afterAll(() => bed?.close());

const allEvents = EVENTS.filter((e) => e.collection === 'all_events');

function run(sql: string, parameters?: Record<string, unknown>) {
  return answer(bed.workspace, {
    sql_query: sql,
    graph_type: 'Table',
    ...(parameters ? { parameters } : {}),
  });
}

describe('binding', () => {
  test.each([
    ['plain', 'acme'],
    ['quotes', "it's ' OR 1=1 --"],
    ['backslashes', 'a\\b\\\\'],
    ['NUL', 'a\u0000b'],
    ['unicode', 'zß水😀\u200d'],
    ['braces', '{tenant:String}'],
    ['empty', ''],
  ])('a String with %s comes back exactly, as one value', async (_, value) => {
    // Characters are counted by each dialect's own function (ClickHouse's length counts bytes).
    const length = ON_CLICKHOUSE ? 'lengthUTF8' : 'length';
    const rows = await tableRows(
      bed.workspace,
      `SELECT {s:String} AS s, ${length}({s:String}) AS n`,
      { parameters: { s: value } },
    );
    expect(rows).toEqual([{ s: value, n: [...value].length }]);
  });

  test('a String filters rows like the value written by hand', async () => {
    for (const user of ['u1', 'u2', 'u3', "u1' OR '1'='1"]) {
      const rows = await tableRows(
        bed.workspace,
        `SELECT count(*) AS c FROM all_events WHERE JSONExtractString(json, 'user') = {user:String}`,
        { parameters: { user } },
      );
      expect(rows).toEqual([{ c: allEvents.filter((e) => e.json.user === user).length }]);
    }
  });

  test('a DateTime is an instant and an Int64 keeps all 64 bits', async () => {
    const since = '2024-03-05T00:00:00Z';
    const rows = await tableRows(
      bed.workspace,
      `SELECT count(*) AS c, {big:Int64} AS big, {u:UInt32}::BIGINT + 1 AS u, {f:Float64} * 2 AS f,
              {d:Date} AS d
       FROM all_events WHERE timestamp >= toUnixTimestamp({since:DateTime})`,
      {
        parameters: { since, big: '9223372036854775807', u: 4294967295, f: 0.25, d: '2024-02-29' },
      },
    );
    expect(rows).toEqual([
      {
        c: allEvents.filter((e) => unix(e.at) >= unix(since)).length,
        big: '9223372036854775807',
        u: 4294967296,
        f: 0.5,
        d: '2024-02-29',
      },
    ]);
  });

  test('the same name may appear many times; Unix seconds are a DateTime too', async () => {
    const rows = await tableRows(
      bed.workspace,
      'SELECT toUnixTimestamp({t:DateTime}) AS a, toUnixTimestamp({t:DateTime}) + 1 AS b',
      { parameters: { t: 1_700_000_000 } },
    );
    expect(rows).toEqual([{ a: 1_700_000_000, b: 1_700_000_001 }]);
  });

  // E'' and dollar-quoted strings are DuckDB's syntax, which ClickHouse does not parse.
  test.skipIf(ON_CLICKHOUSE)(
    'placeholders inside strings, quoted names and comments are SQL, not parameters',
    async () => {
      const rows = await tableRows(
        bed.workspace,
        `SELECT '{a:String}' AS "{b:String}", E'\\'{c:String}' AS e, $q${'$'}{d:String}$q$ AS dq -- {e:String}
       /* {f:String} /* nested */ {g:String} */`,
      );
      expect(rows).toEqual([{ '{b:String}': '{a:String}', e: "'{c:String}", dq: '{d:String}' }]);
    },
  );
});

describe('refusals', () => {
  test.each([
    ['a missing value', 'SELECT {s:String} AS s', {}, "parameter 's' (String) has no value"],
    ['an unused value', 'SELECT 1 AS x', { s: 'a' }, "parameter 's' is not used by the SQL"],
    ['a wrong type', 'SELECT {n:Int64} AS n', { n: 'ten' }, "parameter 'n': expected an Int64"],
    [
      'an out-of-range UInt32',
      'SELECT {n:UInt32} AS n',
      { n: -1 },
      "parameter 'n': expected a UInt32",
    ],
    [
      'an impossible Date',
      'SELECT {d:Date} AS d',
      { d: '2023-02-29' },
      "parameter 'd': expected a Date that exists",
    ],
    ['an unknown type', 'SELECT {s:string} AS s', { s: 'a' }, '{s:string} names no parameter type'],
    [
      'two types for one name',
      'SELECT {s:String}, {s:Int64}',
      { s: '1' },
      "parameter 's' is used as both String and Int64",
    ],
  ])('%s is refused by the protocol, naming the parameter', (_, sql, parameters, message) => {
    const parsed = parseQueryRequest({ sql_query: sql, graph_type: 'Table', parameters });
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.error).toContain(`parameters: ${message}`);
  });

  test.each([
    ['$1', 'SELECT $1 AS x'],
    ['?', 'SELECT ? AS x'],
    ['$name', 'SELECT $s AS x'],
    ['$name beside a placeholder', 'SELECT {s:String} AS a, $t AS b'],
  ])('DuckDB parameters written as %s are refused', async (_, sql) => {
    const reply = await run(sql, sql.includes('{s:') ? { s: 'a' } : undefined);
    // ClickHouse's parser has no such syntax: a 400 with its sentence.
    if (ON_CLICKHOUSE) expect(reply.status).toBe(400);
    else expect(reply).toEqual({ status: 400, body: { error: RAW_PARAMETERS_REFUSED } });
  });

  test('the lock-down still reads the statement with its parameters', async () => {
    const fileRead = ON_CLICKHOUSE
      ? "SELECT * FROM file({path:String}, 'LineAsString')"
      : 'SELECT * FROM read_csv({path:String})';
    const reply = await run(fileRead, { path: '/etc/passwd' });
    expect(reply.status).toBe(400);
    expect((reply.body as { error: string }).error).toMatch(
      ON_CLICKHOUSE ? /table function 'file' is not available/ : /files or URLs/,
    );
  });
});
