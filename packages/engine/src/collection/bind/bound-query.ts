import type { CollectionQuery, ResolvedWindows } from '@analytics-chart/protocol';

/**
 * A planned query with every field it names resolved once against the workspace's storage:
 * what the query reads and how each field is typed there. `Field` is a driver's description of
 * one field (the key paths that spell it and where each is read from). Renderers take this and
 * never read the catalog or the key typing themselves.
 */
export interface BoundQuery<Field> {
  query: CollectionQuery;
  windows: ResolvedWindows;
  /** Every field the plan names (filters, metric, split), each resolved once. */
  fields: ReadonlyMap<string, Field>;
  /** The metric's field, or null where the query names none. */
  metric: Field | null;
  /** The split field, or null where the query names none. */
  split: Field | null;
}

/** A field the query names, as bound; naming one it does not is the renderer's bug. */
export function boundField<Field>(bound: BoundQuery<Field>, name: string): Field {
  const field = bound.fields.get(name);
  if (field === undefined) throw new Error(`field '${name}' was not bound`);
  return field;
}
