import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test, vi } from 'vitest';
import { readSumParts, sumOfParts, WholeSumRefused } from '../src/collection/plan/exact-sum.ts';
import { createEngine } from '../src/index.ts';
import { DOUBLE, LIST, listValue } from '../src/storage/duckdb/duckdb-api.ts';
import { isOutOfRange, wholeSumPartsSql } from '../src/storage/duckdb/exact-sum-sql.ts';
import { readPrepared } from '../src/storage/duckdb/prepared-statements.ts';
import { WorkspaceDb } from '../src/storage/duckdb/workspace-db.ts';
import { memoryConnection } from './helpers/memory-duckdb.ts';
import { exactSum, mean } from './helpers/reference.ts';

/** Doubles of every magnitude, both zeros and subnormals among them. */
const anyValue = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 5e-324, 2 ** -10, -(2 ** -10), 2 ** -11 * 3, 2 ** 64, 2 ** 65, 1.7e308),
  fc.integer({ min: -5, max: 5 }),
);
/** What most metrics hold: prices, durations, counts, from 2^-10 up to 2^40, and zeros. */
const metricValue = fc.oneof(
  fc.double({ min: 2 ** -10, max: 2 ** 40, noNaN: true }),
  fc.double({ min: -(2 ** 40), max: -(2 ** -10), noNaN: true }),
  fc.constantFrom(0, -0, 0.1, 19.99, 1_000_000),
);

describe("DuckDB's whole sum (Sum and Avg as one integer per group)", () => {
  const conn = memoryConnection();

  /** The parts of `values` summed whole, or null where run must add them by their limbs. */
  async function whole(values: number[], condition = 'TRUE') {
    const params = { v: { value: listValue(values), type: LIST(DOUBLE) } };
    try {
      const [row] = await readPrepared(
        conn(),
        `SELECT ${wholeSumPartsSql('x', condition)} FROM (SELECT unnest($v) AS x)`,
        params,
      );
      return readSumParts((row as unknown[])[0]);
    } catch (error) {
      if (!isOutOfRange(error) && !(error instanceof WholeSumRefused)) throw error;
      return null;
    }
  }

  test('is the exact sum and mean, bit for bit, whenever it gives one', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(anyValue, { minLength: 1, maxLength: 200 }), async (values) => {
        const parts = await whole(values);
        if (!parts) return;
        const sum = sumOfParts(parts);
        // -0 and 0 are one JSON text.
        expect(sum.sum() || 0).toBe(exactSum(values) || 0);
        expect(sum.mean()).toBe(mean(values));
      }),
      { numRuns: 400 },
    );
  });

  test("gives one for metrics' values, and leaves the others to the limbs", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(metricValue, { minLength: 1, maxLength: 200 }), async (values) => {
        const parts = await whole(values);
        expect(parts).not.toBeNull();
        expect(sumOfParts(parts as NonNullable<typeof parts>).sum()).toBe(exactSum(values));
      }),
      { numRuns: 200 },
    );
    // Bits below 2^-62 (a value under 2^-10), a product past HUGEINT, and a sum past it.
    expect(await whole([1, 2 ** -11 + 2 ** -63])).toBeNull();
    expect(await whole([1, 2 ** 65])).toBeNull();
    expect(await whole([2 ** 64, 2 ** 64, 2 ** 64])).toBeNull();
  });

  test('a condition keeps its rows alone, the smallest magnitude included', async () => {
    const parts = await whole([2 ** -11 + 2 ** -63, 3, 4.5, 0], 'x > 1');
    expect(parts?.count).toBe(2);
    expect(sumOfParts(parts as NonNullable<typeof parts>).sum()).toBe(7.5);
    expect(await whole([2 ** -11 + 2 ** -63, 3], 'x < 1')).toBeNull();
  });
});

describe('a DuckDB workspace summing a metric', () => {
  test('adds values below 2^-10 by their limbs, straight away once refused, and others whole', async () => {
    const now = 1_800_000_000;
    const tiny = [2 ** -11 + 2 ** -63, 0.0003, 7, 0];
    const price = [19.99, 5, 0.5, 1_000_000];
    const dir = mkdtempSync(join(tmpdir(), 'engine-whole-sum-'));
    const engine = await createEngine({
      dataDir: dir,
      workspaces: { default: 'k' },
      now: () => now,
      bodyWorkers: 0,
    });
    const reads = vi.spyOn(WorkspaceDb.prototype, 'readRows');
    try {
      for (const [i, t] of tiny.entries()) {
        const logged = await engine.log({
          api_key: 'k',
          timestamp: now - 100 + i,
          json: { tiny: t, price: price[i] },
        });
        expect(logged.status).toBe(200);
      }
      const wholeReads = () =>
        reads.mock.calls.filter(([statement]) => statement.sql.includes("'w': sum(")).length;
      const value = async (aggregation: 'Sum' | 'Avg', metric: string) => {
        const answer = await engine.query({
          api_key: 'k',
          graph_type: 'Single Value',
          aggregation,
          metric,
          start: now - 3_600,
          end: now,
        });
        expect(answer.status).toBe(200);
        return (answer.body as { result: Array<Record<string, number>> }).result[0]?.[
          `${aggregation}(${metric})`
        ];
      };
      expect(await value('Sum', 'tiny')).toBe(exactSum(tiny));
      expect(wholeReads()).toBe(1);
      expect(await value('Avg', 'tiny')).toBe(mean(tiny));
      expect(wholeReads()).toBe(1);
      expect(await value('Avg', 'price')).toBe(mean(price));
      expect(wholeReads()).toBe(2);
    } finally {
      reads.mockRestore();
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
