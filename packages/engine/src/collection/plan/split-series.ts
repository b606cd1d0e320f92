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
