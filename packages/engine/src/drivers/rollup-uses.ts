import type { CollectionPlan } from '../collection/plan/collection-plan.ts';
import { rollupRead } from '../collection/plan/rollup-eligibility.ts';
import { type BucketPlan, windowSeconds } from '../collection/plan/time-buckets.ts';
import { AUTO_KEY_NAME, SPAN_SECONDS } from '../storage/rollup-spec.ts';
import type { RollupUses } from '../storage/rollup-usage.ts';

/** Operators both drivers' rollups answer (`bind/*​/bind*rollup.ts`). */
const READABLE = new Set(['=', '≠', '<', '>']);

/**
 * The keys and metric a query would need rolled up to read rollups instead of its events, or
 * undefined when rollups could not answer it whatever they held (not a Count, Sum or Avg line,
 * Single Value, Table, Bar Chart or Pie Chart over enough whole spans, a filter rollups never
 * answer, a dotted path, or a name the engine does not add by itself, {@link AUTO_KEY_NAME}):
 * what automatic rollups count.
 */
export function rollupUses(plan: CollectionPlan): RollupUses | undefined {
  const { query } = plan;
  const window = mainWindow(plan);
  if (!window) return undefined;
  const { aggregation } = query;
  const read = rollupRead({
    aggregation,
    readable: true,
    metricKept: true,
    ...window,
    spanSeconds: SPAN_SECONDS,
  });
  if (!read) return undefined;
  const keys = new Set<string>();
  const lists = [
    query.filters,
    query.compare_filters,
    query.numerator_filters,
    query.denominator_filters,
  ];
  for (const [name, operator] of lists.flatMap((groups) => (groups ?? []).flat())) {
    if (!READABLE.has(operator) || !AUTO_KEY_NAME.test(name)) return undefined;
    keys.add(name);
  }
  if (query.split !== null && query.split !== undefined) {
    if (!AUTO_KEY_NAME.test(query.split)) return undefined;
    keys.add(query.split);
  }
  const sums: string[] = [];
  if (aggregation !== 'Count' && query.metric) {
    if (!AUTO_KEY_NAME.test(query.metric)) return undefined;
    sums.push(query.metric);
  }
  return { keys: [...keys], sums };
}

/** Graph types whose answer is one value, or one per split value, over the whole window. */
const WHOLE_WINDOW = new Set(['Single Value', 'Table', 'Bar Chart', 'Pie Chart']);

/**
 * The main window as the drivers read it from rollups: a line's buckets, or one value over the
 * whole window (null buckets); undefined for what never reads them (Samples, a window with no
 * bucket).
 */
function mainWindow(
  plan: CollectionPlan,
): { plan: BucketPlan | null; lo: number; hi: number } | undefined {
  const { line } = plan;
  if (line) {
    const { buckets, lo, hi } = line.main;
    return buckets ? { plan: buckets, lo, hi } : undefined;
  }
  if (!WHOLE_WINDOW.has(plan.query.graph_type)) return undefined;
  return { plan: null, ...windowSeconds(plan.windows.window) };
}
