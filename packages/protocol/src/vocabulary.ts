/**
 * The closed vocabularies of the Data Query API: graph types, aggregations, granularities,
 * filter operators and sort orders, with the value keys that name result columns.
 */

/** The collection queried (and written) when a request names none. */
export const DEFAULT_COLLECTION = 'all_events';

/** Graph types answered in collection mode. */
export const COLLECTION_GRAPH_TYPES = [
  'Samples',
  'Single Line',
  'Multi Line',
  'Stacked Line',
  'Cumulative Line',
  'Ratio Line',
  'Compare Line',
  'Single Value',
  'Table',
  'Bar Chart',
  'Pie Chart',
] as const;

/** Graph types answered in SQL mode (the spec's column-mapping table). */
export const SQL_GRAPH_TYPES = [
  'Single Line',
  'Multi Line',
  'Stacked Line',
  'Funnel',
  'Bar Chart',
  'Pie Chart',
  'Single Value',
  'Table',
] as const;

export type CollectionGraphType = (typeof COLLECTION_GRAPH_TYPES)[number];
export type SqlGraphType = (typeof SQL_GRAPH_TYPES)[number];
export type GraphType = CollectionGraphType | SqlGraphType;

/** Graph types whose result is a series of time buckets. */
export const TIME_SERIES_GRAPH_TYPES = [
  'Single Line',
  'Multi Line',
  'Stacked Line',
  'Cumulative Line',
  'Ratio Line',
  'Compare Line',
] as const satisfies readonly CollectionGraphType[];

/** Graph types whose rows are `{<split field>: value, <value key>: n}`. */
export const CATEGORY_GRAPH_TYPES = [
  'Table',
  'Bar Chart',
  'Pie Chart',
] as const satisfies readonly CollectionGraphType[];

/** Graph types that group by `split` and therefore require it. */
export const SPLIT_GRAPH_TYPES = [
  'Multi Line',
  'Stacked Line',
  'Table',
  'Bar Chart',
  'Pie Chart',
] as const satisfies readonly CollectionGraphType[];

/** Percentile aggregations, named as the value keys show them. */
export const PERCENTILES = ['P50', 'P75', 'P90', 'P95', 'P99'] as const;
export type Percentile = (typeof PERCENTILES)[number];

/** Canonical aggregation names. `Median` is accepted on input as an alias of `P50`. */
export const AGGREGATIONS = ['Count', 'Sum', 'Avg', ...PERCENTILES] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

export const GRANULARITIES = ['Auto', 'Minute', 'Hour', 'Day', 'Week', 'Month'] as const;
export type Granularity = (typeof GRANULARITIES)[number];
/** A granularity after `Auto` has been decided. */
export type ResolvedGranularity = Exclude<Granularity, 'Auto'>;

/** Filter operators in canonical form. `!=` is accepted on input as an alias of `≠`. */
export const FILTER_OPERATORS = ['=', '≠', 'includes', 'excludes', '>', '<'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

export const ORDERS = ['Ascending', 'Descending'] as const;
export type Order = (typeof ORDERS)[number];

/** Row caps that the engine applies and clients can rely on. */
export const LIMITS = {
  samples: 50,
  table: 2000,
  bar: 50,
  pie: 10,
  series: 10,
  sqlRows: 2000,
} as const;

/**
 * Looks a word up in a vocabulary ignoring case and surrounding spaces, so `count` and ` Count `
 * both mean `Count`. Returns the canonical spelling, or undefined.
 */
export function matchWord<T extends string>(
  words: readonly T[],
  input: string,
  aliases: Readonly<Record<string, T>> = {},
): T | undefined {
  const wanted = input.trim().toLowerCase();
  for (const word of words) if (word.toLowerCase() === wanted) return word;
  for (const [alias, word] of Object.entries(aliases))
    if (alias.toLowerCase() === wanted) return word;
  return undefined;
}

/**
 * The key under which a row carries its value: `Count`, or `Sum(price)`, `P95(price)`…
 * The hosted service names columns this way; the engine and the edge share this one definition.
 */
export function valueKey(aggregation: Aggregation, metric?: string | null): string {
  return aggregation === 'Count' ? 'Count' : `${aggregation}(${metric ?? ''})`;
}

/** Whether a graph type is one of the time-series lines. */
export function isTimeSeries(graphType: GraphType): boolean {
  return (TIME_SERIES_GRAPH_TYPES as readonly string[]).includes(graphType);
}
