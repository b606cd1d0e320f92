/**
 * The one escaping function of the HTTP backend, against DuckDB's own parser and the engine's
 * lock-down: for arbitrary values (quotes, backslashes, NUL, any Unicode, braces, comment and
 * statement characters) a rendered literal is either refused or parses as that one constant,
 * leaving the statement's tree exactly as it is for a harmless value, and reads back exactly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, type Engine } from '@analytics-chart/engine';
import {
  checkSqlParameterValue,
  type SqlParameter,
  type SqlParameterType,
} from '@analytics-chart/protocol';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inlineSqlParameters, SqlLiteralError, sqlLiteral } from '../src/backend/sql-literal.ts';

const API_KEY = `literal-test-${crypto.randomUUID()}`;
let dataDir: string;
let engine: Engine;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'sql-literal-'));
  engine = await createEngine({ dataDir, workspaces: { default: API_KEY } });
});
afterAll(async () => {
  await engine?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function table(sql: string, parameters?: Record<string, unknown>) {
  const answer = await engine.query({
    api_key: API_KEY,
    sql_query: sql,
    graph_type: 'Table',
    ...(parameters ? { parameters } : {}),
  });
  const body = answer.body as { result?: Record<string, unknown>[]; error?: string };
  if (answer.status !== 200) throw new Error(`${answer.status}: ${body.error}`);
  return body.result ?? [];
}

/** DuckDB's parse tree of a statement, without source offsets, through the engine itself. */
async function parseTree(statement: string): Promise<unknown> {
  // The statement travels as a bound parameter of json_serialize_sql: DuckDB's parser reads it.
  const [row] = await table('SELECT json_serialize_sql({q:String}::VARCHAR) AS tree', {
    q: statement,
  });
  // A JSON-typed cell arrives parsed; source offsets move with the literal's length.
  return JSON.parse(JSON.stringify(row?.tree), (key, value) =>
    key === 'query_location' ? undefined : value,
  );
}

/** The constants of a tree in order, and the tree with each constant replaced by a marker. */
function constants(tree: unknown): { values: unknown[]; shape: string } {
  const values: unknown[] = [];
  const shape = JSON.stringify(tree, (_, node) => {
    if (node && typeof node === 'object' && node.class === 'CONSTANT') {
      values.push(node.value?.value);
      return 'CONSTANT';
    }
    return node;
  });
  return { values, shape };
}

/** A statement around a literal: three places it sits, a comment after it, another statement. */
const statement = (literal: string) =>
  `SELECT ${literal} AS v FROM range(2) WHERE ${literal} IS NOT NULL AND 1 = 1 -- ${'{'}x:String}\n; `;

const nasty = fc.string({
  unit: fc.constantFrom(
    "'",
    "''",
    '\\',
    '\u0000',
    '{',
    '}',
    '{t:String}',
    '"',
    '-',
    '--',
    '/*',
    '*/',
    ';',
    '$',
    '$$',
    '\n',
    'E',
    'a',
    'é',
    '水',
    '😀',
    '\u200d',
  ),
  maxLength: 30,
});
const anyString = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), nasty);

describe('sqlLiteral', () => {
  it('reference: the statement around a harmless String parses to one shape', async () => {
    const tree = await parseTree(statement(sqlLiteral({ type: 'String', value: 'x' })));
    // One statement whose constants include the literal twice: the comparison below is meaningful.
    expect((tree as { statements: unknown[] }).statements).toHaveLength(1);
    expect(constants(tree).values.filter((v) => v === 'x')).toHaveLength(2);
  });

  it('a String either is refused (backslash, NUL) or never changes the parse and reads back exactly', async () => {
    const reference = constants(
      await parseTree(statement(sqlLiteral({ type: 'String', value: 'x' }))),
    );
    await fc.assert(
      fc.asyncProperty(anyString, async (raw) => {
        const checked = checkSqlParameterValue('String', raw);
        if (!checked.ok) return; // not a String parameter at all (lone surrogates, too long)
        const parameter: SqlParameter = { type: 'String', value: checked.value };
        if (raw.includes('\\') || raw.includes('\u0000')) {
          expect(() => sqlLiteral(parameter)).toThrow(SqlLiteralError);
          return;
        }
        const literal = sqlLiteral(parameter);
        const tree = constants(await parseTree(statement(literal)));
        expect(tree.shape).toBe(reference.shape);
        expect(tree.values).toEqual(reference.values.map((v) => (v === 'x' ? raw : v)));
        // The engine's lock-down accepts it and the value comes back unchanged.
        expect(await table(statement(literal))).toEqual([{ v: raw }, { v: raw }]);
      }),
      { numRuns: 150 },
    );
  }, 120_000);

  const cases: [SqlParameterType, fc.Arbitrary<unknown>, (v: unknown) => unknown][] = [
    [
      'Int64',
      fc.bigInt(-(2n ** 63n), 2n ** 63n - 1n).map(String),
      (v) => (Math.abs(Number(v)) <= Number.MAX_SAFE_INTEGER ? Number(v) : v),
    ],
    ['UInt32', fc.integer({ min: 0, max: 0xffff_ffff }), (v) => v],
    ['Float64', fc.double({ noNaN: true, noDefaultInfinity: true }), (v) => (v === 0 ? 0 : v)],
    [
      'Date',
      fc
        .date({ min: new Date('1900-01-01'), max: new Date('2200-12-31'), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10)),
      (v) => v,
    ],
  ];
  for (const [type, values, expected] of cases) {
    it(`a ${type} keeps the statement's shape beside a minus sign and reads back exactly`, async () => {
      await fc.assert(
        fc.asyncProperty(values, async (raw) => {
          const checked = checkSqlParameterValue(type, raw);
          expect(checked.ok).toBe(true);
          if (!checked.ok) return;
          const literal = sqlLiteral({ type, value: checked.value });
          // `0 -` before it: a negative number must not turn `- -5` into a comment.
          const check =
            type === 'Date' ? `${literal} - ${literal} = 0` : `0 -${literal} IS NOT NULL`;
          const rows = await table(`SELECT ${literal} AS v, ${check} AS ok`);
          expect(rows).toHaveLength(1);
          const v = rows[0]?.v;
          expect(v === 0 ? 0 : v).toEqual(expected(checked.value));
          expect(rows[0]?.ok).toBe(true);
        }),
        { numRuns: 40 },
      );
    }, 60_000);
  }

  it('a DateTime is the instant of its Unix seconds', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 4_000_000_000 }), async (seconds) => {
        const literal = sqlLiteral({ type: 'DateTime', value: seconds });
        expect(await table(`SELECT toUnixTimestamp(${literal}) AS v`)).toEqual([{ v: seconds }]);
      }),
      { numRuns: 30 },
    );
  }, 60_000);
});

describe('inlineSqlParameters', () => {
  it('writes every placeholder as its literal, drops parameters, and leaves other bodies alone', () => {
    const body = {
      graph_type: 'Table',
      sql_query: "SELECT {t:String} AS a, '{t:String}' AS b, {n:Int64} - {n:Int64} AS c",
      parameters: { t: "it's", n: -3 },
    };
    expect(inlineSqlParameters(body)).toEqual({
      graph_type: 'Table',
      sql_query: "SELECT 'it''s' AS a, '{t:String}' AS b, (-3) - (-3) AS c",
    });
    const plain = { graph_type: 'Table', sql_query: 'SELECT 1' };
    expect(inlineSqlParameters(plain)).toBe(plain);
    expect(() => inlineSqlParameters({ ...body, parameters: { t: 'x' } })).toThrow(
      /parameter 'n' \(Int64\) has no value/,
    );
  });
});
