import type { CollectionQuery, FilterGroups } from '@analytics-chart/protocol';
import type { ClickHouseRollupLookup } from '../../../storage/clickhouse/clickhouse-rollups.ts';
import type {
  ClickHouseBoundQuery,
  ClickHouseField,
  ClickHouseFilters,
} from './bind-clickhouse-query.ts';
import { filtersSql } from './clickhouse-fields.ts';

/** The rollups as a query reads them (`storage/clickhouse/clickhouse-rollups.ts`). */
export interface ClickHouseBoundRollup {
  /** The rollup table, database-qualified and quoted. */
  table: string;
  /** Seconds of one span. */
  spanSeconds: number;
  /**
   * The filter lists over the rollups' key columns, or null where a condition reads a key they
   * do not hold or compares one as they cannot (`includes`, `excludes`).
   */
  where: ClickHouseFilters | null;
  /** The split's string form in the rollups, or null where the split is not a rolled-up key. */
  split: string | null;
  /** The prefix of the metric's sum columns (`_h`, `_m`, `_l`, `_n`, `_r`), or null. */
  sum: string | null;
  /** The collection's rollup rows per event as last counted, where queries weigh them and it is known. */
  rowsPerEvent: number | undefined;
  /** The collection's events per span with any, as last counted, where it is known. */
  eventsPerSpan: number | undefined;
  /** Whether queries weigh rollups against the events. */
  weighed: boolean;
}

/** Operators the rollups answer: they hold each key's string and numeric forms. */
const READABLE = new Set(['=', '≠', '<', '>']);

/**
 * What the workspace's rollups hold of a query: its filter lists written over their key columns
 * by the same `clickhouse-fields.ts` as over the events (a rolled-up key is a field of one
 * spelling whose form columns are the rollups'), its split's column and its metric's sum columns,
 * each where the rollups hold it.
 */
export function bindClickHouseRollup(
  query: CollectionQuery,
  bound: ClickHouseBoundQuery,
  lookup: ClickHouseRollupLookup,
): ClickHouseBoundRollup {
  const lists: Array<FilterGroups | null | undefined> = [
    query.filters,
    query.compare_filters,
    query.numerator_filters,
    query.denominator_filters,
  ];
  const fields = new Map<string, ClickHouseField>();
  let readable = true;
  for (const [name, operator] of lists.flatMap((groups) => (groups ?? []).flat())) {
    const columns = lookup.keyColumns(name);
    if (columns === null || !READABLE.has(operator)) readable = false;
    else {
      const spelling = {
        path: [name],
        columns,
        payload: () => {
          throw new Error('a rolled-up key is read from its columns');
        },
      };
      fields.set(name, { name, spellings: [spelling] });
    }
  }
  const over = { ...bound, fields };
  const list = (groups: FilterGroups | null | undefined) =>
    filtersSql(groups ?? [], over, bound.params);
  const metric = query.aggregation === 'Count' || query.metric === null ? null : query.metric;
  return {
    table: lookup.table,
    spanSeconds: lookup.spanSeconds,
    where: readable
      ? {
          filters: list(query.filters),
          compare: list(query.compare_filters),
          numerator: list(query.numerator_filters),
          denominator: list(query.denominator_filters),
        }
      : null,
    split: query.split === null ? null : (lookup.keyColumns(query.split)?.string ?? null),
    sum: metric === null ? null : lookup.sumColumns(metric),
    rowsPerEvent: lookup.rowsPerEvent(query.collection),
    eventsPerSpan: lookup.eventsPerSpan(query.collection),
    weighed: lookup.weighed,
  };
}
