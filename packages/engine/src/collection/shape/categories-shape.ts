import type { CollectionQuery, Envelope } from '@analytics-chart/protocol';
import { valueKey } from '@analytics-chart/protocol';
import { readAggregate } from '../plan/exact-sum.ts';
import { byValueThenName, categoryCap } from '../plan/split-series.ts';

/**
 * The shape stage of Table, Bar Chart and Pie Chart, the same for every driver: rows
 * `[split value, aggregate]`, one per split value that may rank among the first
 * {@link categoryCap} (the statement keeps those, by bounds), become
 * `{"<split field>": "<value>", "<value key>": n}`, largest first (an empty Count or Sum reads 0,
 * other empty values are null and last: the plan's `empty`), ties by name, capped. Pure: no SQL and no storage.
 */
export function categoriesEnvelope(
  query: CollectionQuery,
  rows: ReadonlyArray<readonly unknown[]>,
  empty: number | null,
): Envelope {
  const key = valueKey(query.aggregation, query.metric);
  // The exact values order the candidates the statement kept by their bounds.
  const ranked = rows
    .map(([sp, v]) => ({
      name: String(sp),
      value: readAggregate(query.aggregation, v ?? null) ?? empty,
    }))
    .sort(byValueThenName)
    .slice(0, categoryCap(query.graph_type));
  const splitField = query.split ?? '';
  return {
    result: ranked.map(({ name, value }) => ({ [splitField]: name, [key]: value })),
    metadata: {},
  };
}
