import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readPrepared, runPrepared } from '../src/storage/prepared-statements.ts';
import { SqlParams } from '../src/storage/sql-params.ts';

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
  const reader = await readPrepared(conn, sql, params);
  return reader.getRows().map(([a]) => Number(a));
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
      return Number((await readPrepared(conn, sql, params)).getRows()[0]?.[0]);
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
        const reader = await readPrepared(conn, sql, params);
        expect(Number(reader.getRows()[0]?.[0])).toBe(k + round);
      }
    }
  });
});
