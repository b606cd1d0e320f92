import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { percentileRanksSql } from '../src/collection/duckdb/aggregate-sql.ts';
import { growingPercentiles, interpolate } from '../src/collection/shape/growing-percentiles.ts';
import { DOUBLE, LIST, listValue } from '../src/storage/duckdb/duckdb-api.ts';
import { readPrepared } from '../src/storage/duckdb/prepared-statements.ts';
import type { NamedParams } from '../src/storage/duckdb/sql-params.ts';
import { memoryConnection } from './helpers/memory-duckdb.ts';
import { quantile } from './helpers/reference.ts';

/** The reference's percentile of every prefix of buckets: each frame sorted on its own. */
function expected(level: number, buckets: number[][]): (number | null)[] {
  return buckets.map((_, i) => quantile(buckets.slice(0, i + 1).flat(), level));
}

/** Doubles of every magnitude, duplicates, subnormals and both zeros among them. */
const value = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 5e-324, -5e-324, 1.7e308, -1.7e308, 0.1, 3),
  fc.integer({ min: -5, max: 5 }),
);

describe('percentiles over the growing frame', () => {
  test('are the reference formula over each prefix of buckets, bit for bit', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(0.5, 0.75, 0.9, 0.95, 0.99),
        fc.array(fc.array(value, { maxLength: 12 }), { maxLength: 8 }),
        (level, buckets) => {
          const got = growingPercentiles(level, buckets);
          const want = expected(level, buckets);
          // -0 and 0 are one JSON text.
          expect(got.map((x) => (x === 0 ? 0 : x))).toEqual(want.map((x) => (x === 0 ? 0 : x)));
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('an empty frame is null until a value arrives, then ranks move as it grows', () => {
    expect(growingPercentiles(0.5, [[], [4, 1], [], [2, 3, 5]])).toEqual([null, 2.5, 2.5, 3]);
    // hi − lo overflows: the weighted form, finite, as the reference's.
    expect(growingPercentiles(0.95, [[1e308], [-1e308]])[1]).toBe(quantile([1e308, -1e308], 0.95));
  });
});

describe("DuckDB's percentile ranks (a Single Value's, without sorting every value)", () => {
  const conn = memoryConnection();

  test('quantile_disc picks the two closest ranks, which interpolate to the reference, bit for bit', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(0.5, 0.75, 0.9, 0.95, 0.99),
        fc.array(value, { minLength: 1, maxLength: 300 }),
        async (level, values) => {
          const params: NamedParams = { v: { value: listValue(values), type: LIST(DOUBLE) } };
          const select = percentileRanksSql('x', level, values.length, params);
          const [row] = await readPrepared(
            conn(),
            `SELECT ${select} FROM (SELECT unnest($v) AS x)`,
            params,
          );
          const [count, [lo, hi]] = row as [bigint, [number, number]];
          expect(Number(count)).toBe(values.length);
          const h = level * (values.length - 1);
          const got = interpolate(lo, hi, h - Math.floor(h));
          const want = quantile(values, level) as number;
          // -0 and 0 are one JSON text.
          expect(got === 0 ? 0 : got).toBe(want === 0 ? 0 : want);
        },
      ),
      { numRuns: 300 },
    );
  });
});
