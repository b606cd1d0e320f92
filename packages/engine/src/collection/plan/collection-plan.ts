import {
  type Aggregation,
  type CollectionQuery,
  type Envelope,
  type FilterGroups,
  type ResolvedWindows,
  resolveWindows,
} from '@analytics-chart/protocol';
import { EngineError } from '../../engine-error.ts';

/**
 * A collection-mode query with its windows resolved against one reading of the engine's clock:
 * what every storage driver compiles to its own SQL.
 */
export interface CollectionPlan {
  query: CollectionQuery;
  windows: ResolvedWindows;
  /** Every field the query names, in filters, metric and split, each once: what bind resolves. */
  fields: string[];
}

/** Plans a collection-mode query at `now` (Unix seconds); a window that cannot be is a 400. */
export function planCollectionQuery(query: CollectionQuery, now: number): CollectionPlan {
  const windows = resolveWindows(query, now);
  if (!windows.ok) throw new EngineError(400, windows.error);
  return { query, windows: windows.value, fields: namedFields(query) };
}

/** Every field name a query names, in filters, metric and split, each once. */
function namedFields(query: CollectionQuery): string[] {
  const names = new Set<string>();
  const groups: Array<FilterGroups | null | undefined> = [
    query.filters,
    query.compare_filters,
    query.numerator_filters,
    query.denominator_filters,
  ];
  for (const group of groups)
    for (const conditions of group ?? []) for (const [name] of conditions) names.add(name);
  if (query.metric !== null) names.add(query.metric);
  if (query.split !== null) names.add(query.split);
  return [...names];
}

/**
 * A collection-mode answer. `json`, when present, is the envelope's JSON text with each Samples
 * payload exactly as stored (a 20-digit integer keeps its digits), for the HTTP app to send
 * as is; in-process callers read `envelope`.
 */
export interface CollectionAnswer {
  envelope: Envelope;
  json?: string;
}

/** What an aggregate over no values reads as: 0 for Count and Sum, null otherwise. */
export function emptyValue(aggregation: Aggregation): number | null {
  return isAdditive(aggregation) ? 0 : null;
}

/**
 * Count and Sum: a window's value is the sum of its parts' values (buckets, spans, a series'
 * cells), which the drivers use to aggregate once and add up.
 */
export function isAdditive(aggregation: Aggregation): boolean {
  return aggregation === 'Count' || aggregation === 'Sum';
}

/**
 * The fraction of each percentile aggregation. Every driver interpolates linearly between the
 * closest ranks, as `numpy.percentile`'s default does.
 */
export const QUANTILE: Partial<Record<Aggregation, number>> = {
  P50: 0.5,
  P75: 0.75,
  P90: 0.9,
  P95: 0.95,
  P99: 0.99,
};
