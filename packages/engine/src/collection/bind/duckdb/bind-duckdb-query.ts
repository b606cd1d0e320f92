import type { Catalog, CollectionEntry, TypedKey } from '../../../storage/duckdb/catalog.ts';
import type { SumForm } from '../../../storage/duckdb/exact-sum-sql.ts';
import type { NamedParams } from '../../../storage/duckdb/sql-params.ts';
import { comparePaths } from '../../../storage/key-path.ts';
import { MAX_DEPTH } from '../../../storage/seen-key.ts';
import type { CollectionPlan } from '../../plan/collection-plan.ts';
import type { BoundQuery } from '../bound-query.ts';
import { bindRollup } from './bind-rollup.ts';
import { fieldsSql } from './field-sql.ts';
import { type BoundFilters, boundFilters } from './filter-sql.ts';

/**
 * One key path that spells a field, and where its forms are: in typed columns (quoted names,
 * null where no event has that form) or, for a path without them, in the payload on every row.
 */
export type DuckDbSpelling =
  | {
      path: string[];
      from: 'columns';
      string: string | null;
      number: string | null;
      array: string | null;
    }
  | { path: string[]; from: 'payload' };

/**
 * A field as a DuckDB collection holds it: its spellings in the order each event tries them
 * (fewer keys first, then longer keys from the left); none for a field no event can have.
 */
export interface DuckDbField {
  name: string;
  spellings: readonly DuckDbSpelling[];
}

/** A query bound to a DuckDB workspace: its fields, its tables and the typing of payload reads. */
export interface DuckDbBoundQuery extends BoundQuery<DuckDbField> {
  /** Whether the collection has events at all (answers are empty otherwise, not errors). */
  collected: boolean;
  /**
   * The relation the query reads: the collection's table, its segments side by side (a column
   * a segment lacks reads as NULL there, which no event of that segment holds), or an empty
   * relation of the same shape.
   */
  relation: string;
  /** An expression over {@link relation} that orders its rows as they were ingested. */
  ingestOrder: string;
  /** The metric's numeric form, or null for Count or where no event holds the metric. */
  metricSql: string | null;
  /** The split's string form, or null where the query has no split or no event holds it. */
  splitSql: string | null;
  /** Each filter list as one condition (`filter-sql.ts`). */
  where: BoundFilters;
  /**
   * The named parameters the SQL above holds; a renderer starts its statement's parameters from
   * these and adds its own under other names.
   */
  params: NamedParams;
  /** Where the workspace keeps rollups (`storage/duckdb/rollups.ts`): what they hold of the query. */
  rollup?: BoundRollup;
  /** How statements add the events' values for Sum and Avg (default: by their limbs). */
  sums?: SumForm;
}

/** The rollups as a query reads them (`bind-rollup.ts`). */
export interface BoundRollup {
  table: string;
  /** The collection's id in their table. */
  collectionId: number;
  /** Seconds of one span. */
  spanSeconds: number;
  /**
   * The filter lists over the rollups' key columns, or null where a condition reads a key they
   * do not hold or compares one as they cannot (`includes`, `excludes`).
   */
  where: BoundFilters | null;
  /** The split's string form in the rollups, or null where the split is not a rolled-up key. */
  split: string | null;
  /** The prefix of the metric's sum columns (`_d0` to `_d3`, `_r`, `_n`), or null. */
  sum: string | null;
  /** The collection's events per span with events, as of the rollups' last merge, if known. */
  eventsPerSpan: number | undefined;
  /** Its rollup rows per event as of the last merge, where queries weigh them and it is known. */
  rowsPerEvent: number | undefined;
}

/** Binds a plan to a DuckDB workspace's catalog: the stage that reads it, once per query. */
export function bindDuckDbQuery(catalog: Catalog, plan: CollectionPlan): DuckDbBoundQuery {
  const { query, windows } = plan;
  const found = catalog.lookup(query.collection, plan.fields);
  const entry = found?.entry;
  const fields = new Map<string, DuckDbField>();
  for (const name of plan.fields)
    fields.set(name, bindDuckDbField(entry, name, found?.fields.get(name) ?? []));
  const params: NamedParams = {};
  const sql = fieldsSql(fields.values(), plan.textFields, params);
  const where = boundFilters(query, sql, params);
  return {
    query,
    windows,
    fields,
    metric: query.metric === null ? null : (fields.get(query.metric) ?? null),
    split: query.split === null ? null : (fields.get(query.split) ?? null),
    collected: entry !== undefined,
    ...readRelation(found?.segments ?? []),
    metricSql:
      query.aggregation === 'Count' || query.metric === null
        ? null
        : (sql.get(query.metric)?.number ?? null),
    splitSql: query.split === null ? null : (sql.get(query.split)?.string ?? null),
    where,
    params,
    ...(entry?.rollup ? { rollup: bindRollup(query, entry.id, entry.rollup, params) } : {}),
  };
}

/** A later segment's ingest order starts this far above an earlier one's. */
const SEGMENT_ROWS = 2 ** 40;
/** The column of a union of segments that holds ingest order. */
const UNION_ORDER = 'ingest_order';

/** The relation over a collection's segments (in ingest order), and its ingest order. */
function readRelation(segments: ReadonlyArray<{ table: string; order: string }>): {
  relation: string;
  ingestOrder: string;
} {
  const [only] = segments;
  if (only && segments.length === 1) return { relation: only.table, ingestOrder: only.order };
  if (segments.length === 0) {
    return {
      relation: `(SELECT NULL::BIGINT AS "timestamp", NULL::VARCHAR AS "json", NULL::BIGINT AS ${UNION_ORDER} WHERE FALSE)`,
      ingestOrder: UNION_ORDER,
    };
  }
  const branches = segments.map(
    (s, i) => `SELECT *, ${s.order} + ${i * SEGMENT_ROWS} AS ${UNION_ORDER} FROM ${s.table}`,
  );
  return { relation: `(${branches.join(' UNION ALL BY NAME ')})`, ingestOrder: UNION_ORDER };
}

/**
 * The spellings of a dotted field from the typed keys that spell it (`typed`). Paths up to {@link MAX_DEPTH} keys have typed columns; a
 * deeper path (split at every dot), a key only wide events held and, in a collection past its
 * typed keys, any untyped one are read from the payload; past its typed keys with several segments, every path is, since a
 * segment without a key's column may still hold the key in payloads.
 */
export function bindDuckDbField(
  entry: CollectionEntry | undefined,
  name: string,
  typed: readonly TypedKey[],
): DuckDbField {
  if (!entry) return { name, spellings: [] };
  const perRow = entry.overflow && entry.segments.length > 1;
  // A key without a typed column of any form is read from the payload.
  const spellings: DuckDbSpelling[] = typed.map(({ key, string, number, array }) =>
    perRow || (string === null && number === null && array === null)
      ? { path: key.path, from: 'payload' }
      : { path: key.path, from: 'columns', string, number, array },
  );
  const split = name.split('.');
  if (split.length > MAX_DEPTH) spellings.push({ path: split, from: 'payload' });
  else if (entry.overflow) {
    for (const path of split.length > 1 ? [[name], split] : [split]) {
      if (
        !typed.some(
          ({ key: k }) => k.path.length === path.length && k.path.every((s, i) => s === path[i]),
        )
      )
        spellings.push({ path, from: 'payload' });
    }
  }
  spellings.sort((a, b) => comparePaths(a.path, b.path));
  return { name, spellings };
}
