import type { CollectionQuery, FilterGroups, ResolvedWindows } from '@analytics-chart/protocol';
import type { CollectionPlan } from '../plan/collection-plan.ts';

/**
 * A planned query with every field it names resolved once against the workspace's storage:
 * what the query reads and how each field is typed there. `Field` is a driver's description of
 * one field (the key paths that spell it and where each is read from). Renderers take this and
 * never read the catalog or the key typing themselves.
 */
export interface BoundQuery<Field> {
  query: CollectionQuery;
  windows: ResolvedWindows;
  /** Every field the query names (filters, metric, split), each resolved once. */
  fields: ReadonlyMap<string, Field>;
  /** The metric's field, or null where the query names none. */
  metric: Field | null;
  /** The split field, or null where the query names none. */
  split: Field | null;
}

/** Every field name a query names, in filters, metric and split, each once. */
export function namedFields(query: CollectionQuery): string[] {
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
 * A bound query from a plan and its named fields, each resolved once (`fields`: every name
 * {@link namedFields} gives, mapped by a driver's binder).
 */
export function boundQuery<Field>(
  plan: CollectionPlan,
  fields: ReadonlyMap<string, Field>,
): BoundQuery<Field> {
  const { query, windows } = plan;
  return {
    query,
    windows,
    fields,
    metric: query.metric === null ? null : (fields.get(query.metric) ?? null),
    split: query.split === null ? null : (fields.get(query.split) ?? null),
  };
}

/** A field the query names, as bound; naming one it does not is the renderer's bug. */
export function boundField<Field>(bound: BoundQuery<Field>, name: string): Field {
  const field = bound.fields.get(name);
  if (field === undefined) throw new Error(`field '${name}' was not bound`);
  return field;
}
