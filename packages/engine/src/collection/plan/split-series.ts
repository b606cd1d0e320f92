import { compareText } from '../../text-order.ts';

/**
 * More (split value, bucket) cells than this are ranked by the database instead of by the
 * engine: below it, one GROUP BY returns every cell and the engine ranks the series itself.
 */
export const MAX_SPLIT_CELLS = 10_000;

/**
 * Split values by their value over the window: largest first, nulls last, ties by name in the
 * databases' text order, so that a split ranked here and one ranked in SQL agree.
 */
export function rankSeries(values: Array<{ name: string; value: number | null }>): string[] {
  return values.sort(byValueThenName).map((r) => r.name);
}

/** The order of {@link rankSeries}: largest value first, nulls last, ties by name. */
export function byValueThenName(
  a: { name: string; value: number | null },
  b: { name: string; value: number | null },
): number {
  if (a.value === b.value) return compareText(a.name, b.name);
  if (a.value === null) return 1;
  if (b.value === null) return -1;
  return b.value - a.value;
}
