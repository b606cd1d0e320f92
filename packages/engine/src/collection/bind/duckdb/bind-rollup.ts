import type { CollectionQuery, FilterGroups } from '@analytics-chart/protocol';
import { numericForm } from '../../../storage/duckdb/key-typing.ts';
import { ROLLUP_TABLE, type RollupLedger, SPAN_SECONDS } from '../../../storage/duckdb/rollups.ts';
import type { NamedParams } from '../../../storage/duckdb/sql-params.ts';
import type { BoundRollup } from './bind-duckdb-query.ts';
import type { FieldSql } from './field-sql.ts';
import { boundFilters } from './filter-sql.ts';

/** Operators the rollups answer: they hold each key's string form, whose numeric form follows. */
const READABLE = new Set(['=', '≠', '<', '>']);

/**
 * What the workspace's rollups hold of a query: its filter lists written over their key columns
 * by the same `filter-sql.ts` as over the events (a rolled-up key's string form is the field's,
 * and its numeric form the numeric form of that text, as a payload read has it), its split's
 * column and its metric's sum columns, each where the rollups hold it.
 */
export function bindRollup(
  query: CollectionQuery,
  collectionId: number,
  ledger: RollupLedger,
  params: NamedParams,
): BoundRollup {
  const lists: Array<FilterGroups | null | undefined> = [
    query.filters,
    query.compare_filters,
    query.numerator_filters,
    query.denominator_filters,
  ];
  const fields = new Map<string, FieldSql>();
  let readable = true;
  for (const condition of lists.flatMap((groups) => (groups ?? []).flat())) {
    const [name, operator] = condition;
    const column = ledger.keyColumn(name);
    if (column === null || !READABLE.has(operator)) readable = false;
    else
      fields.set(name, {
        string: column,
        stored: column,
        number: numericForm(column),
        array: null,
      });
  }
  const metric = query.aggregation === 'Count' || query.metric === null ? null : query.metric;
  return {
    table: ROLLUP_TABLE,
    collectionId,
    spanSeconds: SPAN_SECONDS,
    where: readable ? boundFilters(query, fields, params) : null,
    split: query.split === null ? null : ledger.keyColumn(query.split),
    sum: metric === null ? null : ledger.sumColumns(metric),
    eventsPerSpan: ledger.eventsPerSpan.get(collectionId),
    rowsPerEvent: ledger.weighRows ? ledger.rowsPerEvent.get(collectionId) : undefined,
  };
}
