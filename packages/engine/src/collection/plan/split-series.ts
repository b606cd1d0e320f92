import { LIMITS } from '@analytics-chart/protocol';
import { compareText } from '../../text-order.ts';

/**
 * More (split value, bucket) cells than this are ranked by the database instead of by the
 * engine: below it, one GROUP BY returns every cell and the engine ranks the series itself.
 */
export const MAX_SPLIT_CELLS = 10_000;

/** The order of split values (`shape/line-shape.ts` ranks series by it, categories rank by it): largest value first, nulls last, ties by name. */
export function byValueThenName(
  a: { name: string; value: number | null },
  b: { name: string; value: number | null },
): number {
  if (a.value === b.value) return compareText(a.name, b.name);
  if (a.value === null) return 1;
  if (b.value === null) return -1;
  return b.value - a.value;
}

/**
 * The rows of `grouped` (one per split value, with columns `sp`, `o` and `e`) that can be among
 * the first `cap` in the order above, as SQL both dialects read alike: each value lies within
 * o ± e (e is 0 where the key is the value itself), so a row is kept when it is among the first
 * `cap` by its lower bound (nulls last, ties by name) or its upper bound reaches the `cap`-th
 * lower bound (`nth_value`: NULL on DuckDB, its type's default on ClickHouse where there are
 * fewer rows, all of which are then kept). The engine then orders the kept rows by their exact
 * values and keeps `cap`. One SELECT filtered by QUALIFY, since each nested SELECT costs
 * ClickHouse planning time.
 */
export function rankCandidatesSql(columns: string, grouped: string, cap: string): string {
  const order = 'ORDER BY o - e DESC NULLS LAST, sp';
  return `SELECT ${columns} FROM (${grouped})
    QUALIFY row_number() OVER (${order}) <= ${cap}
      OR o + e >= nth_value(o - e, ${cap}) OVER (${order} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)`;
}

const CATEGORY_CAPS: Readonly<Record<string, number>> = {
  Table: LIMITS.table,
  'Bar Chart': LIMITS.bar,
  'Pie Chart': LIMITS.pie,
};

/** How many split values a Table, Bar Chart or Pie Chart shows: 2,000, 50 or 10. */
export function categoryCap(graphType: string): number {
  return CATEGORY_CAPS[graphType] ?? LIMITS.table;
}
