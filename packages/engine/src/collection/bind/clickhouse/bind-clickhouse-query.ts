import {
  type KeyColumnLookup,
  NO_KEY_COLUMNS,
} from '../../../storage/clickhouse/clickhouse-key-columns.ts';
import type { PayloadReader } from '../../../storage/clickhouse/clickhouse-readable-json.ts';
import type { ClickHouseRollupLookup } from '../../../storage/clickhouse/clickhouse-rollups.ts';
import { formColumnBase, formColumnsAllowed } from '../../../storage/clickhouse/clickhouse-rows.ts';
import {
  EVENTS_TABLE,
  quoteClickHouseIdentifier,
} from '../../../storage/clickhouse/clickhouse-schema.ts';
import { comparePaths } from '../../../storage/key-path.ts';
import type { CollectionPlan } from '../../plan/collection-plan.ts';
import type { BoundQuery } from '../bound-query.ts';
import { bindClickHouseRollup, type ClickHouseBoundRollup } from './bind-clickhouse-rollup.ts';
import {
  filtersSql,
  numericFieldSql,
  type PayloadValues,
  stringFieldSql,
} from './clickhouse-fields.ts';

/**
 * One key path that spells a field, and its form columns (quoted) where the event table has
 * them; without, its forms are read from the payload at the path, as `payload` reads it.
 */
export interface ClickHouseSpelling {
  path: readonly string[];
  columns: { number: string; string: string } | null;
  payload: PayloadReader;
}

/** A field as ClickHouse holds it: its spellings in the order each event tries them. */
export interface ClickHouseField {
  name: string;
  spellings: readonly ClickHouseSpelling[];
}

/** Each filter list of a query as one condition that is never NULL (`true` for none). */
export interface ClickHouseFilters {
  filters: string;
  compare: string;
  numerator: string;
  denominator: string;
}

/**
 * A query bound to a ClickHouse workspace's key columns: its fields, and the SQL of the metric,
 * the split and each filter list, written once here with their `{name:Type}` parameters.
 */
export interface ClickHouseBoundQuery extends BoundQuery<ClickHouseField> {
  /**
   * The workspace's events table, schema-qualified and quoted; where the SQL below reads the
   * payload, the subquery of its rows with those readings as columns ({@link payloadValues}).
   */
  relation: string;
  /** The condition that picks the query's collection from {@link relation}. */
  inCollection: string;
  /** The metric's numeric form, or `NULL` for Count or where the query names none. */
  metricSql: string;
  /** The split's string form, or null where the query has no split. */
  splitSql: string | null;
  where: ClickHouseFilters;
  /** The payload readings {@link relation} adds to the events' columns, by name. */
  payloadValues: PayloadValues;
  /**
   * The parameters the SQL above holds, by name (`collection`, `p<n>`); a renderer starts its
   * statement's parameters from these and adds its own under other names.
   */
  params: Record<string, unknown>;
  /** Where the workspace keeps rollups (`bind-clickhouse-rollup.ts`): what they hold of the query. */
  rollup?: ClickHouseBoundRollup;
}

/**
 * Binds a plan to the key columns a query may read and the workspace's database: the stage that
 * reads them, once, and the only writer of field and filter SQL.
 */
export function bindClickHouseQuery(
  plan: CollectionPlan,
  columns: KeyColumnLookup = NO_KEY_COLUMNS,
  database = 'default',
  rollups?: ClickHouseRollupLookup,
): ClickHouseBoundQuery {
  const table = `${quoteClickHouseIdentifier(database)}.${quoteClickHouseIdentifier(EVENTS_TABLE)}`;
  const fields = new Map<string, ClickHouseField>();
  for (const name of plan.fields) {
    const spellings = fieldSpellings(name).map((path) => ({
      path,
      columns:
        columns.bases.size > 0 && formColumnsAllowed(path)
          ? (columns.bases.get(formColumnBase(path)) ?? null)
          : null,
      payload: columns.payload,
    }));
    fields.set(name, { name, spellings });
  }
  const { query, windows } = plan;
  const metric = query.metric === null ? null : (fields.get(query.metric) ?? null);
  const split = query.split === null ? null : (fields.get(query.split) ?? null);
  const params: Record<string, unknown> = { collection: query.collection };
  // The field and filter writers read the bound fields; the SQL they write fills the rest in.
  const bound: ClickHouseBoundQuery = {
    query,
    windows,
    fields,
    metric,
    split,
    relation: table,
    inCollection: 'collection = {collection:String}',
    metricSql: 'NULL',
    splitSql: null,
    where: { filters: 'true', compare: 'true', numerator: 'true', denominator: 'true' },
    payloadValues: new Map(),
    params,
  };
  const values = bound.payloadValues;
  if (metric !== null && query.aggregation !== 'Count')
    bound.metricSql = numericFieldSql(metric, params, values);
  if (split !== null) bound.splitSql = stringFieldSql(split, params, values);
  const list = (groups: CollectionPlan['query']['filters'] | null | undefined) =>
    filtersSql(groups ?? [], bound, params);
  bound.where = {
    filters: list(query.filters),
    compare: list(query.compare_filters),
    numerator: list(query.numerator_filters),
    denominator: list(query.denominator_filters),
  };
  if (rollups) bound.rollup = bindClickHouseRollup(query, bound, rollups);
  if (values.size > 0) {
    // The statements' conditions on collection and time stay outside, where ClickHouse pushes
    // them down to the table's primary key before any reading is computed.
    const columns = [...values].map(([name, sql]) => `${sql} AS ${name}`);
    bound.relation = `(SELECT *, ${columns.join(', ')} FROM ${table})`;
  }
  return bound;
}

/** Spellings of a field tried per event when it has more dots than this: the literal key and the full split. */
const MAX_SPELLED_PARTS = 6;

/**
 * The key paths that spell a dotted field (`a.b.c`: `a.b.c`; `a.b` › `c`; `a` › `b.c`;
 * `a` › `b` › `c`), in the order the DuckDB driver tries them: fewer keys first, then longer
 * keys from the left. A field of more than six parts: the literal key, then split at every dot.
 */
export function fieldSpellings(field: string): string[][] {
  const parts = field.split('.');
  if (parts.length > MAX_SPELLED_PARTS) return parts.length > 1 ? [[field], parts] : [parts];
  const out: string[][] = [];
  // Each of the parts.length - 1 dots either separates two keys or stays inside one.
  for (let mask = 0; mask < 2 ** (parts.length - 1); mask++) {
    const path: string[] = [parts[0] as string];
    for (let i = 1; i < parts.length; i++) {
      if (mask & (1 << (i - 1))) path.push(parts[i] as string);
      else path[path.length - 1] += `.${parts[i]}`;
    }
    out.push(path);
  }
  return out.sort(comparePaths);
}
