import type { CollectionPlan } from '../collection/plan/collection-plan.ts';
import { rollupRead } from '../collection/plan/rollup-eligibility.ts';
import { AUTO_KEY_NAME, SPAN_SECONDS } from '../storage/rollup-spec.ts';
import type { RollupUses } from '../storage/rollup-usage.ts';

/** Operators both drivers' rollups answer (`bind/*​/bind*rollup.ts`). */
const READABLE = new Set(['=', '≠', '<', '>']);

/**
 * The keys and metric a query would need rolled up to read rollups instead of its events, or
 * undefined when rollups could not answer it whatever they held (not a Count, Sum or Avg line
 * over enough whole spans, a filter rollups never answer, a dotted path, or a name the engine
 * does not add by itself, {@link AUTO_KEY_NAME}): what automatic rollups count.
 */
export function rollupUses(plan: CollectionPlan): RollupUses | undefined {
  const { query, line } = plan;
  const buckets = line?.main.buckets;
  if (!line || !buckets) return undefined;
  const { aggregation } = query;
  const read = rollupRead({
    aggregation,
    readable: true,
    metricKept: true,
    plan: buckets,
    lo: line.main.lo,
    hi: line.main.hi,
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
