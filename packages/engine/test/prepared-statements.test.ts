import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readPrepared, runPrepared } from '../src/storage/duckdb/prepared-statements.ts';
import { SqlParams } from '../src/storage/duckdb/sql-params.ts';

/** The per-connection cache of prepared statements that ingest and queries run through. */

let instance: DuckDBInstance;
let conn: Awaited<ReturnType<DuckDBInstance['connect']>>;

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  conn = await instance.connect();
  await conn.run('CREATE TABLE t AS SELECT range AS a, range * 10 AS b FROM range(10)');
});
afterAll(() => {
  conn.closeSync();
  instance.closeSync();
});

/** The values of `a` above `min`, through the cache. */
async function above(min: number): Promise<number[]> {
  const params = new SqlParams();
  const sql = `SELECT a FROM t WHERE a > ${params.integer(min)} ORDER BY a`;
  return (await readPrepared(conn, sql, params)).map(([a]) => Number(a));
}

describe('readPrepared and runPrepared', () => {
  test('one statement text, new values on every run', async () => {
    expect(await above(7)).toEqual([8, 9]);
    expect(await above(5)).toEqual([6, 7, 8, 9]);
    expect(await above(9)).toEqual([]);
  });

  test('a write through the cache is seen by a read through it', async () => {
    const params = new SqlParams();
    const sql = `INSERT INTO t VALUES (${params.integer(10)}, ${params.integer(100)})`;
    expect(Number((await runPrepared(conn, sql, params)).rowsChanged)).toBe(1);
    expect(await above(8)).toEqual([9, 10]);
  });

  test('a cached statement still answers after the table gains a column', async () => {
    expect(await above(8)).toEqual([9, 10]);
    await conn.run('ALTER TABLE t ADD COLUMN c VARCHAR');
    expect(await above(8)).toEqual([9, 10]);
  });

  test('a failing run does not stick to the statement', async () => {
    const cast = async (text: string) => {
      const params = new SqlParams();
      const sql = `SELECT CAST(${params.text(text)} AS INTEGER) + 1`;
      return Number((await readPrepared(conn, sql, params))[0]?.[0]);
    };
    expect(await cast('41')).toBe(42);
    await expect(cast('not a number')).rejects.toThrow(/Conversion Error/);
    expect(await cast('1')).toBe(2);
  });

  test('more statement texts than are kept: the evicted ones are prepared again', async () => {
    for (let round = 0; round < 2; round++) {
      for (let k = 0; k < 40; k++) {
        const params = new SqlParams();
        const sql = `SELECT ${k} + ${params.integer(round)} AS v`;
        const rows = await readPrepared(conn, sql, params);
        expect(Number(rows[0]?.[0])).toBe(k + round);
      }
    }
  });

  test('a result of several chunks comes back whole, in order, with every column and NULL', async () => {
    // 5,000 rows span three of DuckDB's 2,048-row chunks.
    const params = new SqlParams();
    const sql = `SELECT range AS i, CASE WHEN range % 7 = 0 THEN NULL ELSE 'v' || range END AS s,
      range / 4 AS d FROM range(${params.integer(5000)}) ORDER BY range`;
    const rows = await readPrepared(conn, sql, params);
    expect(rows.length).toBe(5000);
    for (let i = 0; i < 5000; i += 1) {
      const row = rows[i] as unknown[];
      expect(row.length).toBe(3);
      expect(Number(row[0])).toBe(i);
      expect(row[1]).toBe(i % 7 === 0 ? null : `v${i}`);
      expect(row[2]).toBe(i / 4);
    }
  });

  test('an empty result is no rows', async () => {
    const params = new SqlParams();
    const sql = `SELECT a FROM t WHERE a > ${params.integer(1000)}`;
    expect(await readPrepared(conn, sql, params)).toEqual([]);
  });
});
