import fc from 'fast-check';
import { describe, expect, test, vi } from 'vitest';
import { groupedPercentiles } from '../src/collection/duckdb/percentile-neighbors-sql.ts';
import {
  type AroundValue,
  percentileAround,
  summedAround,
} from '../src/collection/shape/percentile-neighbors.ts';
import { DOUBLE, LIST, listValue, VARCHAR } from '../src/storage/duckdb/duckdb-api.ts';
import { readPrepared } from '../src/storage/duckdb/prepared-statements.ts';
import { WorkspaceDb } from '../src/storage/duckdb/workspace-db.ts';
import { loggedEngine } from './helpers/logged-engine.ts';
import { memoryConnection } from './helpers/memory-duckdb.ts';
import { type FixtureEvent, quantile, referenceAnswer } from './helpers/reference.ts';

const LEVELS = [0.5, 0.75, 0.9, 0.95, 0.99];

/** Doubles of every magnitude, repeats and both zeros among them. */
const anyValue = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 5e-324, 1, 2, 19.99, 1.7e308, -1.7e308),
  fc.integer({ min: -3, max: 3 }),
);

/** What the SQL counts around `v` in `values`, written here from its definition. */
function around(values: readonly number[], v: number | null): AroundValue {
  if (v === null) return { v, below: 0, equal: 0, under: null, over: null };
  const below = values.filter((x) => x < v);
  const above = values.filter((x) => x > v);
  return {
    v,
    below: below.length,
    equal: values.filter((x) => x === v).length,
    under: below.length ? Math.max(...below) : null,
    over: above.length ? Math.min(...above) : null,
  };
}

/** JSON's text of a number, the form the answer takes (−0 is written 0). */
const text = (value: number | null | undefined) => JSON.stringify(value);

describe('a percentile from a value near its ranks and the counts around it', () => {
  test('is the sorted values’ percentile wherever the value is within one place of the ranks', () => {
    fc.assert(
      fc.property(
        fc.array(anyValue, { minLength: 1, maxLength: 60 }),
        fc.constantFrom(...LEVELS),
        fc.nat(),
        (values, level, pick) => {
          const sorted = [...values].sort((a, b) => a - b);
          const h = level * (values.length - 1);
          const first = Math.max(0, Math.ceil(h) - 1);
          const last = Math.min(values.length - 1, Math.floor(h) + 1);
          const v = sorted[first + (pick % (last - first + 1))] as number;
          const answer = percentileAround(level, values.length, around(values, v));
          expect(text(answer)).toBe(text(quantile(values, level)));
        },
      ),
      { numRuns: 500 },
    );
  });

  test('is undefined, never a guess, where the value is too far from the ranks', () => {
    const values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    // P95 of ten values is between x[8] and x[9]: 9 and 10; around 7 the counts reach only 6 to 8.
    expect(percentileAround(0.95, 10, around(values, 7))).toBeUndefined();
    expect(percentileAround(0.95, 10, around(values, 9))).toBe(quantile(values, 0.95));
    expect(percentileAround(0.95, 0, around([], null))).toBeNull();
  });

  test('over a whole window, from each bucket’s counts around the window’s value', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(anyValue, { maxLength: 12 }), { minLength: 1, maxLength: 6 }),
        fc.constantFrom(...LEVELS),
        (buckets, level) => {
          const values = buckets.flat();
          fc.pre(values.length > 0);
          const sorted = [...values].sort((a, b) => a - b);
          const v = sorted[Math.floor(level * (values.length - 1))] as number;
          const whole = summedAround(
            v,
            buckets.map((b) => around(b, v)),
          );
          expect(text(percentileAround(level, values.length, whole))).toBe(
            text(quantile(values, level)),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("DuckDB's grouped percentiles (groupedPercentiles)", () => {
  const conn = memoryConnection();

  /** The statements' rows over `rows` of [group, value], grouped by group and for all. */
  async function grouped(rows: Array<[string, number]>, level: number, maxGroups = 100) {
    const params = {
      sp: { value: listValue(rows.map(([sp]) => sp)), type: LIST(VARCHAR) },
      m: { value: listValue(rows.map(([, m]) => m)), type: LIST(DOUBLE) },
    };
    const neighbors = groupedPercentiles({
      level,
      base: 'SELECT unnest($sp) AS sp, unnest($m) AS m',
      keys: [{ name: 'sp', text: true }],
      coarsest: 0,
      maxGroups,
      params,
      layout: ({ keys: [sp], values: [one] }) => [sp, one?.value, one?.events],
    });
    const first = await readPrepared(conn(), neighbors.first.sql, neighbors.first.params);
    const around = neighbors.around(first);
    const second = around ? await readPrepared(conn(), around.sql, around.params) : null;
    return neighbors.rows(first, second);
  }

  test('gives each group’s and the whole’s percentile as the reference does', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd'), anyValue), {
          minLength: 1,
          maxLength: 80,
        }),
        fc.constantFrom(...LEVELS),
        async (rows, level) => {
          const out = await grouped(rows, level);
          expect(out).not.toBeNull();
          const groups = [...new Set(rows.map(([sp]) => sp))];
          const expected = [
            ...groups.map((g) => {
              const values = rows.filter(([sp]) => sp === g).map(([, m]) => m);
              return [g, text(quantile(values, level)), values.length];
            }),
            [
              null,
              text(
                quantile(
                  rows.map(([, m]) => m),
                  level,
                ),
              ),
              rows.length,
            ],
          ];
          const got = (out ?? []).map(([sp, v, c]) => [sp, text(v as number), Number(c)]);
          const order = (a: unknown[], b: unknown[]) => String(a[0]).localeCompare(String(b[0]));
          expect(got.sort(order)).toEqual(expected.sort(order));
        },
      ),
      { numRuns: 150 },
    );
  });

  test('gives null, for the sorting statement to answer, past its number of groups', async () => {
    const rows: Array<[string, number]> = [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ];
    expect(await grouped(rows, 0.95, 2)).toBeNull();
    expect(await grouped(rows, 0.95, 4)).toHaveLength(4);
  });
});

describe('DuckDB percentile lines', () => {
  test('read their ranks around quantile_disc’s values, without sorting each bucket', async () => {
    const now = 1_800_000_000;
    // Six hours of values with repeats, zeros of both signs and a gap, some events without one,
    // in 13 plans, so that a split line keeps the top 10 of them.
    const values = [0, -0, 5, 5, 5, 17.5, 1e6, 3, -2, 5e-324, 1.5e300];
    const events: FixtureEvent[] = Array.from({ length: 260 }, (_, i) => ({
      timestamp: now - 6 * 3600 + i * 83,
      json:
        i % 7 === 0
          ? { other: i, plan: `p${i % 13}` }
          : { ms: values[(i * 7) % values.length] as number, plan: `p${i % 13}` },
    }));
    const { engine, close } = await loggedEngine('percentile-line', 'k', events, now);
    const sorts = vi.spyOn(WorkspaceDb.prototype, 'readRows');
    try {
      const base = {
        api_key: 'k',
        granularity: 'Hour',
        metric: 'ms',
        IANA_time_zone: 'UTC',
        start: now - 3 * 3600 - 1,
        end: now,
      };
      for (const aggregation of ['P50', 'P75', 'P90', 'P95', 'P99'] as const) {
        for (const body of [
          { ...base, aggregation, graph_type: 'Single Line' },
          {
            ...base,
            aggregation,
            graph_type: 'Compare Line',
            compare_filters: [['plan', '=', 'p1']],
          },
          { ...base, aggregation, graph_type: 'Multi Line', split: 'plan' },
          {
            ...base,
            aggregation,
            graph_type: 'Stacked Line',
            split: 'plan',
            compare: '2 hours ago',
          },
        ]) {
          const answer = await engine.query(body);
          expect(answer.status, JSON.stringify(answer.body)).toBe(200);
          expect(JSON.stringify(answer.body), JSON.stringify(body)).toBe(
            JSON.stringify(referenceAnswer(events, body, now)),
          );
        }
      }
      // Each line read in one snapshot of two statements: the one that sorts never ran.
      expect(sorts).not.toHaveBeenCalled();
    } finally {
      sorts.mockRestore();
      await close();
    }
  });
});
