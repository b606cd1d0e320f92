import type { ClickHouseClient } from '@clickhouse/client-web';
import { MAX_KEY_VALUES, type RollupSpec, SPAN_SECONDS } from '../rollup-spec.ts';
import { sumPartAggregatesSql } from './clickhouse-exact-sum-sql.ts';
import { NUMERIC_TEXT, numericFormSql, stringFormSql } from './clickhouse-forms.ts';
import type { KeyColumnLookup } from './clickhouse-key-columns.ts';
import { formColumnBase, formColumnsAllowed } from './clickhouse-rows.ts';
import { EVENTS_TABLE, ROLLUPS_TABLE, rollupViewName } from './clickhouse-schema.ts';
import { clickHouseStringLiteral, quoteClickHouseIdentifier } from './clickhouse-sql-text.ts';

/**
 * Rollups on ClickHouse: each collection's event count per 15-minute span of UTC time, per
 * string and numeric form of the keys the workspace declares, with the exact sums' parts of the
 * metrics it declares (`clickhouse-exact-sum-sql.ts`), as on DuckDB (`../duckdb/rollups.ts`).
 * A materialized view adds every insert into the event table to an AggregatingMergeTree, whatever
 * the events' time, so late events land in their old spans with no work of the engine's; readers
 * add a span's rows up, as its parts may not be merged yet. The table's comment holds the spec it
 * was built with, once it was filled (a table without one is read by no engine). Opening a
 * workspace with another spec (or none) builds it anew (`clickhouse-rollup-open.ts`), and
 * automatic keys add a wider table beside it (`clickhouse-rollup-addition.ts`), each filled by
 * its view and from the events across a boundary in time, so that events other engines insert
 * meanwhile count once (`clickhouse-rollup-fill.ts`); of the complete tables, the one with the
 * most keys and sums is read, and the others are dropped after a grace period.
 *
 * A key past {@link MAX_KEY_VALUES} distinct string forms (uniqExact over the table) is no longer
 * read: queries on it read the events. The view still writes it (the table's rows then grow with
 * its values), so its rows stay the events' answer; declaring the keys again without it rebuilds.
 */

/** The columns of the i-th key: its string form and its numeric form. */
const keyColumns = (i: number) => ({ string: `k${i}`, number: `kn${i}` });
/** The prefix of the i-th metric's columns: `_h`, `_m`, `_l` (limb sums), `_n` (count), `_r` (off-grid values). */
const sumPrefix = (i: number) => `s${i}`;

/** How long a count of the keys' distinct values is taken as current, in milliseconds. */
const CARDINALITY_TTL_MS = 30_000;
/**
 * How old the table a following engine reads may be known to be current, in milliseconds: past
 * it a query waits for the look, so that no engine reads a table long after it was superseded.
 */
const FOLLOW_STALE_MS = 60_000;
/** Collections whose rows per event are remembered at most (the most rows first); others read rollups as unweighed. */
const MAX_WEIGHED_COLLECTIONS = 10_000;
/** Seconds a superseded rollup table is kept (and written) after the table replacing it was complete. */
const SUPERSEDED_GRACE_S = 180;

/** A complete rollup table of the workspace: its name and the spec its comment holds. */
export interface RollupTable {
  name: string;
  spec: RollupSpec;
  /** Seconds since its comment was written (its last change). */
  age: number;
}

/** The rollups as a query reads them: the table, and each key's columns where it is read. */
export interface ClickHouseRollupLookup {
  /** The table, database-qualified and quoted. */
  table: string;
  spanSeconds: number;
  /** A key's string and numeric columns, or null where it is not rolled up (or no longer read). */
  keyColumns(name: string): { string: string; number: string } | null;
  /** The prefix of a metric's columns, or null where it is not rolled up. */
  sumColumns(name: string): string | null;
  /**
   * A collection's rollup rows per event as last counted, where queries weigh them and it is
   * known (`collection/plan/rollup-eligibility.ts`).
   */
  rowsPerEvent(collection: string): number | undefined;
  /**
   * A collection's events per span that has any, as last counted, where it is known: how many
   * whole spans a window needs before its rollups repay their fixed cost.
   */
  eventsPerSpan(collection: string): number | undefined;
  /** Whether queries weigh rollups against the events (`rollupReads` `'cheaper'`). */
  weighed: boolean;
}

/** Where a workspace's rollups are read from, and which rollups the engine added itself. */
export interface ClickHouseRollupsOptions {
  /** The table's name (default {@link ROLLUPS_TABLE}). */
  table?: string;
  /** With automatic keys: the declared spec, the rest of the table's being the engine's own. */
  declared?: RollupSpec;
  /** Whether the engine looks for a wider table another engine made, with every count. */
  follow?: boolean;
}

/** A workspace's rollups: its spec, and which keys are still read. */
export class ClickHouseRollups {
  readonly #client: ClickHouseClient;
  readonly #database: string;
  readonly #declared: RollupSpec | undefined;
  readonly #follow: boolean;
  #spec: RollupSpec;
  #name: string;
  /** Keys past the bound: never read again by this engine (from this table). */
  #dropped = new Set<string>();
  #counted = Number.NEGATIVE_INFINITY;
  #counting: Promise<void> | undefined;
  /** Tables taken up so far, so that a look begun before one is not taken up after it. */
  #adoptions = 0;
  /** Each collection's rollup rows per event, as counted with the keys' values. */
  #rowsPerEvent = new Map<string, number>();
  /** Each collection's events per span with any, counted with them. */
  #eventsPerSpan = new Map<string, number>();
  /**
   * Whether queries weigh the rollup rows against the events (engine option `rollupReads`,
   * `'cheaper'`), rather than read rollups wherever they give the answer (`'always'`).
   */
  weighRows = true;

  constructor(
    client: ClickHouseClient,
    database: string,
    spec: RollupSpec,
    options: ClickHouseRollupsOptions = {},
  ) {
    this.#client = client;
    this.#database = database;
    this.#spec = spec;
    this.#name = options.table ?? ROLLUPS_TABLE;
    this.#declared = options.declared;
    this.#follow = options.follow === true;
  }

  /** What the table read now keeps. */
  get spec(): RollupSpec {
    return this.#spec;
  }

  /** The database holding the rollups. */
  get database(): string {
    return this.#database;
  }

  /** How many of the spec's keys and sums the engine added by itself (beyond the declared). */
  get added(): { keys: number; sums: number } {
    const declared = this.#declared ?? this.#spec;
    return {
      keys: this.#spec.keys.filter((k) => !declared.keys.includes(k)).length,
      sums: this.#spec.sums.filter((m) => !declared.sums.includes(m)).length,
    };
  }

  /** Reads `table` from now on, where it is not the one read already. */
  adopt(table: RollupTable): void {
    if (table.name === this.#name) return;
    this.#adoptions++;
    this.#name = table.name;
    this.#spec = table.spec;
    this.#dropped = new Set();
    this.#rowsPerEvent = new Map();
    this.#eventsPerSpan = new Map();
    this.#counted = Number.NEGATIVE_INFINITY;
  }

  /**
   * The lookup a query binds to, once the keys' distinct values and the collections' rows per
   * event and events per span were counted: the first count is waited for, and one older than
   * {@link CARDINALITY_TTL_MS} is taken again beside the query, which reads the last one
   * meanwhile (a stale count only makes a read slower, never other, as the view keeps every
   * value), so no query waits for that round trip but the first. A
   * following engine also looks for the current table then, and waits for a look older than
   * {@link FOLLOW_STALE_MS}.
   */
  async lookup(): Promise<ClickHouseRollupLookup> {
    const age = Date.now() - this.#counted;
    if (age > CARDINALITY_TTL_MS) {
      this.#counting ??= this.#refresh().finally(() => {
        this.#counting = undefined;
      });
      if (this.#counted === Number.NEGATIVE_INFINITY || (this.#follow && age > FOLLOW_STALE_MS))
        await this.#counting;
      else
        this.#counting.catch(() => {
          // Kept: the last count stays good enough, and the next query counts again.
        });
    }
    const { keys, sums } = this.#spec;
    const dropped = this.#dropped;
    const rows = this.weighRows ? this.#rowsPerEvent : new Map<string, number>();
    const density = this.#eventsPerSpan;
    return {
      table: `${quoteClickHouseIdentifier(this.#database)}.${quoteClickHouseIdentifier(this.#name)}`,
      spanSeconds: SPAN_SECONDS,
      keyColumns: (name) => {
        const i = keys.indexOf(name);
        return i < 0 || dropped.has(name) ? null : keyColumns(i);
      },
      sumColumns: (name) => {
        const i = sums.indexOf(name);
        return i < 0 ? null : sumPrefix(i);
      },
      rowsPerEvent: (collection) => rows.get(collection),
      eventsPerSpan: (collection) => density.get(collection),
      weighed: this.weighRows,
    };
  }

  /** Takes up the current table (following), drops superseded ones, and counts the keys' values. */
  async #refresh(): Promise<void> {
    if (this.#follow) {
      const adoptions = this.#adoptions;
      const { tables } = await listRollupTables(this.#client, this.#database);
      const current = currentTable(tables);
      if (current && adoptions === this.#adoptions) {
        this.adopt(current);
        await dropSuperseded(this.#client, this.#database, tables, current);
      }
    }
    await this.#count();
  }

  /**
   * Counts each key's distinct string forms across the workspace's rollups, and each
   * collection's rows (as a read adds them up, merged or not) per event and events per span.
   */
  async #count(): Promise<void> {
    const { keys } = this.#spec;
    const name = this.#name;
    const table = `${quoteClickHouseIdentifier(this.#database)}.${quoteClickHouseIdentifier(name)}`;
    // One statement (one round trip): the keys' counts, then the collections' figures as tuples.
    const figures = `(SELECT groupArray((collection, r, e)) FROM (
        SELECT collection, count() / sum(n) AS r, sum(n) / uniqExact(span) AS e FROM ${table}
        GROUP BY collection ORDER BY count() DESC LIMIT ${MAX_WEIGHED_COLLECTIONS}))`;
    const counts = keys.map((_, i) => `uniqExact(${keyColumns(i).string})`);
    // Without keys no aggregate makes the statement one row: the figures' own FROM is enough.
    const query = counts.length
      ? `SELECT ${[...counts, figures].join(', ')} FROM ${table}`
      : `SELECT ${figures}`;
    const result = await this.#client.query({
      query,
      format: 'JSONCompactEachRow',
    });
    const [row] = await result.json<Array<unknown>>();
    // A count of a table replaced meanwhile says nothing of the new one.
    if (name !== this.#name) return;
    keys.forEach((key, i) => {
      if (Number(row?.[i] ?? 0) > MAX_KEY_VALUES) this.#dropped.add(key);
    });
    const tuples = row?.[keys.length];
    const collections = Array.isArray(tuples) ? (tuples as Array<[string, number, number]>) : [];
    this.#rowsPerEvent = new Map(collections.map(([c, r]) => [String(c), Number(r)]));
    this.#eventsPerSpan = new Map(collections.map(([c, , e]) => [String(c), Number(e)]));
    this.#counted = Date.now();
  }
}

/**
 * The workspace's rollup tables (complete ones with their spec, others with none) and whether
 * its event table is Distributed.
 */
export async function listRollupTables(
  client: ClickHouseClient,
  database: string,
): Promise<{
  distributed: boolean;
  tables: Array<{ name: string; spec?: RollupSpec; age: number }>;
}> {
  const found = await client.query({
    query: `SELECT name, engine, comment, dateDiff('second', metadata_modification_time, now()) AS age
      FROM system.tables WHERE database = {db:String} AND (name = {events:String}
        OR (startsWith(name, {rollups:String}) AND engine LIKE '%AggregatingMergeTree'))`,
    query_params: { db: database, rollups: ROLLUPS_TABLE, events: EVENTS_TABLE },
    format: 'JSONEachRow',
  });
  const rows = await found.json<{ name: string; engine: string; comment: string; age: number }>();
  return {
    distributed: rows.some((t) => t.name === EVENTS_TABLE && t.engine === 'Distributed'),
    tables: rows
      .filter((t) => t.name !== EVENTS_TABLE)
      .map((t) => {
        const spec = parseSpec(t.comment);
        return { name: t.name, age: Number(t.age), ...(spec ? { spec } : {}) };
      }),
  };
}

/** The table queries read: of the complete ones, the one with the most keys and sums (then the newest). */
export function currentTable(
  tables: ReadonlyArray<{ name: string; spec?: RollupSpec; age: number }>,
): RollupTable | undefined {
  const size = (t: RollupTable) => t.spec.keys.length + t.spec.sums.length;
  const complete = tables.filter((t): t is RollupTable => t.spec !== undefined);
  return complete.sort((a, b) => size(b) - size(a) || a.age - b.age)[0];
}

/** Drops the complete tables `current` superseded, once it has been complete for the grace period. */
async function dropSuperseded(
  client: ClickHouseClient,
  database: string,
  tables: ReadonlyArray<{ name: string; spec?: RollupSpec }>,
  current: RollupTable,
): Promise<void> {
  if (current.age < SUPERSEDED_GRACE_S) return;
  for (const t of tables) {
    if (t.name !== current.name && t.spec) await dropRollupTable(client, database, t.name);
  }
}

/** Drops a rollup table and the view that fills it, the view first so that no insert fails. */
export async function dropRollupTable(
  client: ClickHouseClient,
  database: string,
  name: string,
): Promise<void> {
  const db = quoteClickHouseIdentifier(database);
  await client.command({
    query: `DROP VIEW IF EXISTS ${db}.${quoteClickHouseIdentifier(rollupViewName(name))}`,
  });
  await client.command({ query: `DROP TABLE IF EXISTS ${db}.${quoteClickHouseIdentifier(name)}` });
}

/** The rollup table's DDL, without the comment that says it is complete. */
export function tableSql(table: string, spec: RollupSpec): string {
  const columns = ['collection LowCardinality(String)', 'span Int64'];
  spec.keys.forEach((_, i) => {
    const k = keyColumns(i);
    columns.push(`${k.string} Nullable(String)`, `${k.number} Nullable(Float64)`);
  });
  columns.push('n SimpleAggregateFunction(sum, UInt64)');
  spec.sums.forEach((_, i) => {
    const p = sumPrefix(i);
    for (const limb of ['h', 'm', 'l'])
      columns.push(`${p}_${limb} SimpleAggregateFunction(sum, Int128)`);
    columns.push(
      `${p}_n SimpleAggregateFunction(sum, UInt64)`,
      `${p}_r SimpleAggregateFunction(groupArrayArray, Array(Float64))`,
    );
  });
  const order = [
    'collection',
    'span',
    ...spec.keys.flatMap((_, i) => Object.values(keyColumns(i))),
  ];
  return `CREATE TABLE ${table} (${columns.join(', ')})
ENGINE = AggregatingMergeTree ORDER BY (${order.join(', ')})
SETTINGS allow_nullable_key = 1`;
}

export const specComment = (spec: RollupSpec) =>
  JSON.stringify({ keys: spec.keys, sums: spec.sums });

/**
 * A top-level key's two forms as the raw statements read them: its form columns where the table
 * has them (which an insert's block already holds, so the view parses no JSON), else the payload
 * at the key. The keys' names are the server's own declaration (`rollup-spec.ts`), never a
 * request's, written as literals because a view's query takes no parameters.
 */
export function formsSql(
  name: string,
  columns: KeyColumnLookup,
): { string: string; number: string } {
  const path = [name];
  const own = formColumnsAllowed(path) ? columns.bases.get(formColumnBase(path)) : undefined;
  if (own) return own;
  const at = (reading: (keys: string) => string) =>
    columns.payload((p) => reading(`${p}, ${clickHouseStringLiteral(name)}`));
  return {
    string: at(stringFormSql),
    number: at((keys) => numericFormSql(keys, clickHouseStringLiteral(NUMERIC_TEXT))),
  };
}

/**
 * The rows of `events` (the event table, or the block an insert adds to it; those `where` holds
 * for) as the rollups keep them: per collection, span and key forms, the count and each metric's
 * parts.
 */
export function rollupSelectSql(
  events: string,
  spec: RollupSpec,
  columns: KeyColumnLookup,
  where?: string,
): string {
  const selected = [
    'collection',
    `intDiv(timestamp - (((timestamp % ${SPAN_SECONDS}) + ${SPAN_SECONDS}) % ${SPAN_SECONDS}), ${SPAN_SECONDS}) AS span`,
  ];
  const groups = ['collection', 'span'];
  spec.keys.forEach((name, i) => {
    const k = keyColumns(i);
    const forms = formsSql(name, columns);
    selected.push(`${forms.string} AS ${k.string}`, `${forms.number} AS ${k.number}`);
    groups.push(k.string, k.number);
  });
  selected.push('count() AS n');
  spec.sums.forEach((name, i) => {
    const p = sumPrefix(i);
    const parts = sumPartAggregatesSql(formsSql(name, columns).number);
    selected.push(
      `coalesce(${parts.h}, toInt128(0)) AS ${p}_h`,
      `coalesce(${parts.m}, toInt128(0)) AS ${p}_m`,
      `coalesce(${parts.l}, toInt128(0)) AS ${p}_l`,
      `${parts.n} AS ${p}_n`,
      `CAST(${parts.r}, 'Array(Float64)') AS ${p}_r`,
    );
  });
  const filter = where === undefined ? '' : ` WHERE ${where}`;
  return `SELECT ${selected.join(', ')} FROM ${events}${filter} GROUP BY ${groups.join(', ')}`;
}

/** The spec a table's comment holds, or undefined for a comment that holds none. */
function parseSpec(comment: string): RollupSpec | undefined {
  try {
    const { keys, sums } = JSON.parse(comment) as RollupSpec;
    return Array.isArray(keys) && Array.isArray(sums) ? { keys, sums } : undefined;
  } catch {
    return undefined;
  }
}
