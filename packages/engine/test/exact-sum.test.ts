import { describe, expect, test } from 'vitest';
import { ExactSum, readSumParts, roundScaled } from '../src/collection/plan/exact-sum.ts';
import { DuckDBInstance } from '../src/storage/duckdb/duckdb-api.ts';
import { sumPartsSql, valuePartsRelation } from '../src/storage/duckdb/exact-sum-sql.ts';

/** Parts holding only off-grid values, which the module reads exactly. */
function sumOf(values: number[]): ExactSum {
  return new ExactSum().addParts({ limbs: [0n, 0n, 0n], rest: values, count: values.length });
}

describe('exact sums rounded once', () => {
  test('the sum is the exact one, rounded to nearest, ties to even', () => {
    expect(sumOf(Array.from({ length: 10 }, () => 0.1)).sum()).toBe(1);
    expect(sumOf([1e20, 3, -1e20]).sum()).toBe(3);
    // 2^53 + 1 is a tie between 2^53 and 2^53 + 2: the even one; 2^53 + 3 rounds up.
    expect(sumOf([2 ** 53, 1]).sum()).toBe(2 ** 53);
    expect(sumOf([2 ** 53, 3]).sum()).toBe(2 ** 53 + 4);
    expect(sumOf([5e-324, 5e-324, -1e-323]).sum()).toBe(0);
    expect(sumOf([2.2250738585072014e-308, -5e-324]).sum()).toBe(2.225073858507201e-308);
    expect(sumOf([1.7e308, 1.7e308, -1.7e308]).sum()).toBe(1.7e308);
    expect(sumOf([Number.MAX_VALUE, Number.MAX_VALUE]).sum()).toBe(Number.POSITIVE_INFINITY);
    expect(sumOf([-Number.MAX_VALUE, -1e308]).sum()).toBe(Number.NEGATIVE_INFINITY);
    expect(sumOf([]).sum()).toBe(0);
  });

  test('the mean is the exact sum over the count, rounded once, and never overflows', () => {
    expect(sumOf([Number.MAX_VALUE, Number.MAX_VALUE]).mean()).toBe(Number.MAX_VALUE);
    expect(sumOf([1, 2]).mean()).toBe(1.5);
    expect(sumOf([1, 1, 2]).mean()).toBe(4 / 3);
    expect(sumOf([5e-324, 0]).mean()).toBe(0);
    expect(sumOf([5e-324, 5e-324, 5e-324, 0]).mean()).toBe(5e-324);
    expect(sumOf([]).mean()).toBeNull();
  });

  test('limbs of |x|·2^90 weigh 2^124, 2^62 and 1', () => {
    const parts = { limbs: [1n, -1n, 2n ** 89n] as const, rest: [0.25], count: 3 };
    const exact = 2 ** 34 - 2 ** -28 + 0.5 + 0.25;
    expect(new ExactSum().addParts(parts).sum()).toBe(exact);
    expect(roundScaled(3n, 1)).toBe(1.5);
    expect(roundScaled(-(2n ** 1100n), 0)).toBe(Number.NEGATIVE_INFINITY);
  });

  test('the order of adding never matters', () => {
    const values = [1e16, 1, 1, -1e16, 0.1, 2 ** -60, 123.456, -0.5, 3.3e-5, 7e9, 1e-310];
    const forward = sumOf(values).sum();
    for (let i = 0; i < 20; i++) {
      const shuffled = [...values].sort(() => Math.random() - 0.5);
      const halves = new ExactSum()
        .addSum(sumOf(shuffled.slice(0, 5)))
        .addSum(sumOf(shuffled.slice(5)));
      expect(halves.sum()).toBe(forward);
    }
  });
});

describe("DuckDB: one value's parts", () => {
  test('are the value itself, and the parts the aggregate writes for it', async () => {
    // On the grid and off it (below 2^-90, at and beyond 2^96), signed zeros, null, extremes.
    const values = [
      0.1,
      -2.5,
      19.99,
      0,
      -0,
      2 ** -90,
      2 ** -91,
      3 * 2 ** -95,
      2 ** 96,
      -(2 ** 96) + 2 ** 44,
      123456789.123,
      -1e-300,
      1e300,
      Number.MAX_VALUE,
      5e-324,
      7,
      null,
    ];
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    try {
      const rows = values.map((v, i) => `(${i}, ${v === null ? 'NULL' : `${v}::DOUBLE`})`);
      await conn.run(`CREATE TABLE t AS SELECT * FROM (VALUES ${rows.join(', ')}) AS x(id, v)`);
      const aggregated = await conn.runAndReadAll(
        `SELECT id, ${sumPartsSql('v')} FROM t GROUP BY id ORDER BY id`,
      );
      const single = await conn.runAndReadAll(
        `SELECT id, {'h': h::HUGEINT, 'm': m::HUGEINT, 'l': l::HUGEINT, 'r': r, 'n': n}
         FROM (${valuePartsRelation('SELECT id, v FROM t', ['id'])}) ORDER BY id`,
      );
      const parts = (reader: typeof single) =>
        reader.getRowsJS().map(([, p]) => readSumParts(p as Record<string, unknown>));
      const byValue = parts(single);
      expect(byValue).toEqual(parts(aggregated));
      // Independently: each value's parts are that value, exactly, and a null is no value.
      byValue.forEach((p, i) => {
        const v = values[i] ?? null;
        const alone = new ExactSum().addParts(p);
        expect(alone.sum()).toBe(v === null ? 0 : v + 0);
        expect(alone.count).toBe(v === null ? 0 : 1);
      });
      // Some values really went through the limbs, and some really stayed off the grid.
      expect(byValue.filter((p) => p.limbs.some((l) => l !== 0n)).length).toBeGreaterThan(5);
      expect(byValue.filter((p) => p.rest.length > 0).length).toBeGreaterThan(2);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});
