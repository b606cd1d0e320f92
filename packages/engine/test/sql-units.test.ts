import { READ_ONLY_SQL } from '@analytics-chart/protocol';
import { describe, expect, test } from 'vitest';
import { EngineError } from '../src/engine-error.ts';
import { macroStatementsFor } from '../src/sql-mode/duckdb/clickhouse-macros.ts';
import { collectionViewStatements } from '../src/sql-mode/duckdb/collection-views.ts';
import { describeDuckDBError } from '../src/sql-mode/duckdb/describe-duckdb-error.ts';
import { FILE_ACCESS_REFUSED, inspectSqlAst } from '../src/sql-mode/duckdb/inspect-sql-ast.ts';
import { SqlGate } from '../src/sql-mode/duckdb/sql-gate.ts';
import { funnelConversion } from '../src/sql-mode/shape-sql-result.ts';
import {
  formatLabel,
  labelFormat,
  type TimePoint,
  type WallClock,
} from '../src/sql-mode/time-labels.ts';
import { quoteIdentifier } from '../src/storage/duckdb/quote-identifier.ts';

/** The pure parts of SQL mode, by table. */

function refusal(error: unknown) {
  expect(error).toBeInstanceOf(EngineError);
  const e = error as EngineError;
  return { status: e.status, message: e.message };
}

describe('describeDuckDBError', () => {
  const cases: Array<[string, number, string]> = [
    [
      'Binder Error: Referenced column "secret_col" not found in FROM clause!\nCandidate bindings: "store.internal.secret"\n\nLINE 1: SELECT secret_col FROM x\n               ^',
      400,
      'Binder Error: Referenced column "secret_col" not found in FROM clause!',
    ],
    [
      'Catalog Error: Scalar Function with name foo does not exist!\nDid you mean "floor"?\n\nLINE 1: SELECT foo(1)',
      400,
      'Catalog Error: Scalar Function with name foo does not exist!',
    ],
    [
      'Catalog Error: Table with name x does not exist! Did you mean "store.internal"?',
      400,
      'Catalog Error: Table with name x does not exist!',
    ],
    [
      'Parser Error: syntax error at or near "FORM"\n\nLINE 1: SELECT 1 FORM x',
      400,
      'SQL syntax error: syntax error at or near "FORM"',
    ],
    [
      'Permission Error: Cannot access file "/srv/data/other.duckdb" - file system operations are disabled by configuration',
      400,
      FILE_ACCESS_REFUSED,
    ],
    ['IO Error: Cannot open file "/srv/data/secret.csv": No such file', 400, FILE_ACCESS_REFUSED],
    ['INTERRUPT Error: Interrupted!', 504, 'Query timed out'],
    [
      'Out of Memory Error: failed to allocate data of size 128.0 MiB\n\nPossible solutions:\n* SET memory_limit',
      400,
      'The query needs more memory than SQL mode allows; aggregate in SQL or select fewer rows',
    ],
    [
      'TransactionContext Error: Cannot write to database "a" - transaction is launched in read-only mode',
      400,
      READ_ONLY_SQL,
    ],
    [
      'INTERNAL Error: Attempted to access index 3 within vector of size 3 at /build/src/x.cpp',
      400,
      'The database could not run this query',
    ],
    [
      `Conversion Error: Could not convert string '${'x'.repeat(80)}' to INT32`,
      400,
      `Conversion Error: Could not convert string '${'x'.repeat(37)}...' to INT32`,
    ],
    [
      'Invalid Input Error: could not open /var/lib/engine/workspaces/a.duckdb.wal for reading',
      400,
      'Invalid Input Error: could not open <path> for reading',
    ],
    [
      'Failure running pending result task: Binder Error: No function matches "f(INTEGER)"',
      400,
      'Binder Error: No function matches "f(INTEGER)"',
    ],
  ];
  for (const [message, status, expected] of cases) {
    test(message.split('\n')[0] ?? message, () => {
      expect(refusal(describeDuckDBError(new Error(message)))).toEqual({
        status,
        message: expected,
      });
    });
  }
});

describe('inspectSqlAst on malformed serializer output', () => {
  test('unreadable JSON, parser errors, non-SELECT and empty input', () => {
    expect(inspectSqlAst('not json')).toEqual({
      ok: false,
      status: 400,
      message: 'The SQL query could not be read',
    });
    expect(
      inspectSqlAst(
        JSON.stringify({
          error: true,
          error_type: 'parser',
          error_message: 'syntax error at end of input',
        }),
      ),
    ).toEqual({
      ok: false,
      status: 400,
      message: 'SQL syntax error: syntax error at end of input',
    });
    expect(
      inspectSqlAst(
        JSON.stringify({
          error: true,
          error_type: 'not implemented',
          error_message: 'Only SELECT statements can be serialized to json!',
        }),
      ),
    ).toEqual({ ok: false, status: 400, message: READ_ONLY_SQL });
    expect(inspectSqlAst(JSON.stringify({ error: false, statements: [] }))).toEqual({
      ok: false,
      status: 400,
      message: 'The SQL query contains no statement',
    });
  });

  test('an unknown query node kind is refused rather than trusted', () => {
    const tree = { error: false, statements: [{ node: { type: 'INSERT_NODE' } }] };
    expect(inspectSqlAst(JSON.stringify(tree))).toEqual({
      ok: false,
      status: 400,
      message: READ_ONLY_SQL,
    });
  });
});

describe('refusals never echo the SQL at length', () => {
  test('a parser error over a thousand quotes is cut to 300 characters', () => {
    const verdict = inspectSqlAst(
      JSON.stringify({
        error: true,
        error_type: 'parser',
        error_message: `syntax error at or near "${'"'.repeat(1000)}"`,
      }),
    );
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) {
      expect(verdict.message.length).toBeLessThanOrEqual(300 + 'SQL syntax error: '.length);
      expect(verdict.message).toMatch(/^SQL syntax error: syntax error at or near "+\.\.\.$/);
    }
  });
});

describe('collectionViewStatements', () => {
  const collections = [
    { name: 'all_events', relation: '"store"."c0"' },
    { name: 'Signups', relation: '"store"."c1"' },
  ];

  test('collections, base, case-insensitive names and unknown names', () => {
    expect(
      collectionViewStatements(
        ['all_events', 'base', 'signups', 'nothing', 'SIGNUPS'],
        collections,
      ),
    ).toEqual([
      'CREATE OR REPLACE TEMP VIEW "all_events" AS SELECT "timestamp", "json" FROM "store"."c0"',
      'CREATE OR REPLACE TEMP VIEW "base" AS SELECT "timestamp", "json" FROM "store"."c0"',
      'CREATE OR REPLACE TEMP VIEW "signups" AS SELECT "timestamp", "json" FROM "store"."c1"',
      'CREATE OR REPLACE TEMP VIEW "nothing" AS SELECT CAST(NULL AS BIGINT) AS "timestamp", CAST(NULL AS VARCHAR) AS "json" WHERE false',
    ]);
    expect(collectionViewStatements(['base'], collections, 'Signups')).toEqual([
      'CREATE OR REPLACE TEMP VIEW "base" AS SELECT "timestamp", "json" FROM "store"."c1"',
    ]);
  });

  test('names are quoted identifiers; paths and URLs are refused unless they are collections', () => {
    expect(quoteIdentifier('a"; DROP TABLE x; --')).toBe('"a""; DROP TABLE x; --"');
    expect(() => collectionViewStatements(['/etc/passwd'], collections)).toThrow(
      FILE_ACCESS_REFUSED,
    );
    expect(() => collectionViewStatements(['s3://bucket/x.parquet'], collections)).toThrow(
      FILE_ACCESS_REFUSED,
    );
    expect(() => collectionViewStatements(['data.csv'], collections)).toThrow(FILE_ACCESS_REFUSED);
    expect(collectionViewStatements(['a/b'], [{ name: 'a/b', relation: '"store"."c9"' }])).toEqual([
      'CREATE OR REPLACE TEMP VIEW "a/b" AS SELECT "timestamp", "json" FROM "store"."c9"',
    ]);
  });
});

describe('macroStatementsFor', () => {
  test('only the macros a query calls, helpers first, any case', () => {
    const statements = macroStatementsFor(['TOSTARTOFHOUR', 'count_star', 'sum']);
    expect(statements.map((s) => /MACRO (\w+)/.exec(s)?.[1])).toEqual([
      '_ch_parse_instant',
      '_ch_instant',
      '_ch_wall_floor',
      'toStartOfHour',
    ]);
    expect(macroStatementsFor(['count_star', 'sum'])).toEqual([]);
  });

  test('every statement is fixed text: no request value can be in it', () => {
    const all = macroStatementsFor(['jsonextractstring', 'todatetime', 'now', 'today', 'uniq']);
    for (const statement of all) expect(statement).toMatch(/^CREATE OR REPLACE TEMP MACRO /);
    expect(all.join('\n')).not.toMatch(/America|Europe|UTC'/);
  });
});

describe('time labels', () => {
  const wall = (iso: string): WallClock => {
    const d = new Date(`${iso}Z`);
    return {
      year: d.getUTCFullYear(),
      month: d.getUTCMonth() + 1,
      day: d.getUTCDate(),
      hour: d.getUTCHours(),
      minute: d.getUTCMinutes(),
      second: d.getUTCSeconds(),
      millisecond: d.getUTCMilliseconds(),
    };
  };
  const points = (...isos: string[]): TimePoint[] =>
    isos.map((iso) => ({ wall: wall(iso), order: Date.parse(`${iso}Z`) }));

  test('the granularity is the coarsest one every value fits', () => {
    expect(labelFormat(points('2024-03-01T00:00:00', '2024-04-01T00:00:00'))).toBe('Month');
    expect(labelFormat(points('2024-03-04T00:00:00', '2024-03-11T00:00:00'))).toBe('Week');
    expect(labelFormat(points('2024-03-04T00:00:00', '2024-03-05T00:00:00'))).toBe('Day');
    expect(labelFormat(points('2024-03-01T00:00:00'))).toBe('Day');
    expect(labelFormat(points('2024-03-01T00:00:00', '2024-03-01T05:00:00'))).toBe('Hour');
    expect(labelFormat(points('2024-03-01T05:00:00', '2024-03-01T05:07:00'))).toBe('Minute');
    expect(labelFormat(points('2024-03-01T05:07:00', '2024-03-01T05:00:00'))).toBe('Minute');
    expect(labelFormat(points('2024-03-01T05:00:00', '2024-03-01T05:00:09'))).toBe('Second');
    expect(labelFormat([])).toBe('Day');
  });

  test('labels follow the formats of collection mode', () => {
    const w = wall('2024-03-05T14:07:09.250');
    expect(formatLabel(w, 'Month')).toBe('2024-03');
    expect(formatLabel(w, 'Week')).toBe('2024-03-05');
    expect(formatLabel(w, 'Day')).toBe('2024-03-05');
    expect(formatLabel(w, 'Hour')).toBe('2024-03-05 14:00');
    expect(formatLabel(w, 'Minute')).toBe('2024-03-05 14:07');
    expect(formatLabel(w, 'Second')).toBe('2024-03-05 14:07:09.250');
    expect(formatLabel(wall('2024-03-05T14:07:09'), 'Second')).toBe('2024-03-05 14:07:09');
  });
});

test('funnelConversion', () => {
  expect(funnelConversion([200, 100, 25], 'previous')).toEqual([1, 0.5, 0.25]);
  expect(funnelConversion([200, 100, 25], 'first')).toEqual([1, 0.5, 0.125]);
  expect(funnelConversion([0, 5], 'previous')).toEqual([1, null]);
  expect(funnelConversion([10, null, 5], 'previous')).toEqual([1, null, null]);
  expect(funnelConversion([], 'first')).toEqual([]);
});

describe('SqlGate', () => {
  test('runs up to its slots at once and queues the rest in order', async () => {
    const gate = new SqlGate(2);
    const first = await gate.enter(1000);
    const second = await gate.enter(1000);
    expect(gate.active).toBe(2);
    const order: string[] = [];
    const third = gate.enter(1000).then((release) => {
      order.push('third');
      return release;
    });
    const fourth = gate.enter(1000).then((release) => {
      order.push('fourth');
      return release;
    });
    first?.();
    first?.(); // releasing twice frees one slot only
    (await third)?.();
    second?.();
    (await fourth)?.();
    expect(order).toEqual(['third', 'fourth']);
    expect(gate.active).toBe(0);
  });

  test('a wait longer than the time limit gives up', async () => {
    const gate = new SqlGate(1);
    const held = await gate.enter(1000);
    expect(await gate.enter(20)).toBeNull();
    held?.();
    expect(gate.active).toBe(0);
    const next = await gate.enter(20);
    expect(next).not.toBeNull();
    next?.();
  });

  test('refuses a gate without slots', () => {
    expect(() => new SqlGate(0)).toThrow(RangeError);
  });
});
