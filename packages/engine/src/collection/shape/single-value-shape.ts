import { type CollectionQuery, type Envelope, valueKey } from '@analytics-chart/protocol';
import { readAggregate } from '../plan/exact-sum.ts';

/**
 * The shape stage of Single Value, the same for every driver: each window's rows (one row, the
 * aggregate first; none for a window no whole second fits in) become `[{"<value key>": n}]`,
 * and `compare_result` the same over the compare window when the request has one (`compare`
 * not null); a window with no value reads as the plan's `empty`. Pure: no SQL and no storage.
 */
export function singleValueEnvelope(
  query: CollectionQuery,
  main: ReadonlyArray<readonly unknown[]>,
  compare: ReadonlyArray<readonly unknown[]> | null,
  empty: number | null,
): Envelope {
  const key = valueKey(query.aggregation, query.metric);
  const value = (rows: ReadonlyArray<readonly unknown[]>) => [
    { [key]: readAggregate(query.aggregation, rows[0]?.[0] ?? null) ?? empty },
  ];
  const envelope: Envelope = { result: value(main), metadata: {} };
  if (compare !== null) envelope.compare_result = value(compare);
  return envelope;
}
