import type { ClickHouseClient } from '@clickhouse/client-web';
import { MAX_KEY_VALUES, type RollupSpec, SPAN_SECONDS } from '../rollup-spec.ts';
import { awaitBuildLock, releaseBuildLock, takeBuildLock } from './clickhouse-build-lock.ts';
import { sumPartAggregatesSql } from './clickhouse-exact-sum-sql.ts';
import { NUMERIC_TEXT, numericFormSql, stringFormSql } from './clickhouse-forms.ts';
import type { KeyColumnLookup } from './clickhouse-key-columns.ts';
import { formColumnBase, formColumnsAllowed } from './clickhouse-rows.ts';
import { EVENTS_TABLE, ROLLUPS_TABLE, ROLLUPS_VIEW } from './clickhouse-schema.ts';
import { clickHouseStringLiteral, quoteClickHouseIdentifier } from './clickhouse-sql-text.ts';

/**
 * Rollups on ClickHouse: each collection's event count per 15-minute span of UTC time, per
 * string and numeric form of the keys the workspace declares, with the exact sums' parts of the
 * metrics it declares (`clickhouse-exact-sum-sql.ts`), as on DuckDB (`../duckdb/rollups.ts`).
 * A materialized view adds every insert into the event table to an AggregatingMergeTree, whatever
 * the events' time, so late events land in their old spans with no work of the engine's; readers
 * add a span's rows up, as its parts may not be merged yet. The table's comment holds the spec it
 * was built with, once it was filled (a table without one is read by no engine); opening a workspace with another spec (or none) builds it anew from the events
 * in one INSERT … SELECT, which counts twice what another engine inserts meanwhile: build them
 * while only this engine writes to the workspace.
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

/** The rollups as a query reads them: the table, and each key's columns where it is read. */
export interface ClickHouseRollupLookup {
  /** The table, database-qualified and quoted. */
  table: string;
  spanSeconds: number;
  /** A key's string and numeric columns, or null where it is not rolled up (or no longer read). */
  keyColumns(name: string): { string: string; number: string } | null;
  /** The prefix of a metric's columns, or null where it is not rolled up. */
  sumColumns(name: string): string | null;
}

/** A workspace's rollups: its spec, and which keys are still read. */
export class ClickHouseRollups {
  readonly spec: RollupSpec;
  readonly #client: ClickHouseClient;
  readonly #table: string;
  /** Keys past the bound: never read again by this engine. */
  readonly #dropped = new Set<string>();
  #counted = Number.NEGATIVE_INFINITY;
  #counting: Promise<void> | undefined;

  constructor(client: ClickHouseClient, database: string, spec: RollupSpec) {
    this.#client = client;
    this.#table = `${quoteClickHouseIdentifier(database)}.${quoteClickHouseIdentifier(ROLLUPS_TABLE)}`;
    this.spec = spec;
  }

  /**
   * The lookup a query binds to, once the keys' distinct values were counted: the first count is
   * waited for, and one older than {@link CARDINALITY_TTL_MS} is taken again beside the query,
   * which reads the last one meanwhile (a stale count only makes a read slower, never other, as
   * the view keeps every value), so no query waits for that round trip but the first.
   */
  async lookup(): Promise<ClickHouseRollupLookup> {
    if (this.spec.keys.length > 0 && Date.now() - this.#counted > CARDINALITY_TTL_MS) {
      this.#counting ??= this.#count().finally(() => {
        this.#counting = undefined;
      });
      if (this.#counted === Number.NEGATIVE_INFINITY) await this.#counting;
      else
        this.#counting.catch(() => {
          // Kept: the last count stays good enough, and the next query counts again.
        });
    }
    const { keys, sums } = this.spec;
    return {
      table: this.#table,
      spanSeconds: SPAN_SECONDS,
      keyColumns: (name) => {
        const i = keys.indexOf(name);
        return i < 0 || this.#dropped.has(name) ? null : keyColumns(i);
      },
      sumColumns: (name) => {
        const i = sums.indexOf(name);
        return i < 0 ? null : sumPrefix(i);
      },
    };
  }

  /** Counts each key's distinct string forms across the workspace's rollups. */
  async #count(): Promise<void> {
    const { keys } = this.spec;
    const result = await this.#client.query({
      query: `SELECT ${keys.map((_, i) => `uniqExact(${keyColumns(i).string})`).join(', ')} FROM ${this.#table}`,
      format: 'JSONCompactEachRow',
    });
    const [counts] = await result.json<Array<number | string>>();
    keys.forEach((name, i) => {
      if (Number(counts?.[i] ?? 0) > MAX_KEY_VALUES) this.#dropped.add(name);
    });
    this.#counted = Date.now();
  }
}

/** The rollup table's DDL, without the comment that says it is complete. */
function tableSql(table: string, spec: RollupSpec): string {
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

const specComment = (spec: RollupSpec) => JSON.stringify({ keys: spec.keys, sums: spec.sums });

/**
 * A top-level key's two forms as the raw statements read them: its form columns where the table
 * has them (which an insert's block already holds, so the view parses no JSON), else the payload
 * at the key. The keys' names are the server's own declaration (`rollup-spec.ts`), never a
 * request's, written as literals because a view's query takes no parameters.
 */
function formsSql(name: string, columns: KeyColumnLookup): { string: string; number: string } {
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
 * The rows of `events` (the event table, or the block an insert adds to it) as the rollups
 * keep them: per collection, span and key forms, the count and each metric's parts.
 */
function rollupSelectSql(events: string, spec: RollupSpec, columns: KeyColumnLookup): string {
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
  return `SELECT ${selected.join(', ')} FROM ${events} GROUP BY ${groups.join(', ')}`;
}

/**
 * Brings a workspace database in line with its setting, before the workspace takes events, and
 * answers the rollups it keeps: with a spec, builds the table, its view and its rows from the
 * events where they are missing or kept by another spec, reading the form columns `columns`
 * names (give the declared keys theirs first); `true`, keeps the ones it has, else builds counts
 * alone; `false` drops them; unset (tools that are not the workspace's server) keeps what the
 * database has. Engines opening the workspace at once build one at a time
 * (`clickhouse-build-lock.ts`); one that waited uses what the other built when it is the same.
 */
export async function openClickHouseRollups(
  client: ClickHouseClient,
  database: string,
  setting: RollupSpec | boolean | undefined,
  columns: KeyColumnLookup,
): Promise<ClickHouseRollups | undefined> {
  for (;;) {
    const found = await keptRollups(client, database, setting);
    if (found.settled) return found.rollups;
    if (await takeBuildLock(client, database)) {
      try {
        // Another engine may have built these very rollups while this one waited for the lock.
        const now = await keptRollups(client, database, setting);
        if (now.settled) return now.rollups;
        return await buildRollups(client, database, setting as RollupSpec | boolean, columns);
      } finally {
        await releaseBuildLock(client, database);
      }
    }
    await awaitBuildLock(client, database);
  }
}

/** The rollups the database keeps where they suit the setting as they are; unsettled: to build or drop. */
async function keptRollups(
  client: ClickHouseClient,
  database: string,
  setting: RollupSpec | boolean | undefined,
): Promise<{ settled: true; rollups: ClickHouseRollups | undefined } | { settled: false }> {
  const found = await client.query({
    query: `SELECT name, engine, comment FROM system.tables
      WHERE database = {db:String} AND name IN ({rollups:String}, {events:String})`,
    query_params: { db: database, rollups: ROLLUPS_TABLE, events: EVENTS_TABLE },
    format: 'JSONEachRow',
  });
  const tables = await found.json<{ name: string; engine: string; comment: string }>();
  const present = tables.find((t) => t.name === ROLLUPS_TABLE);
  if (setting && tables.some((t) => t.name === EVENTS_TABLE && t.engine === 'Distributed')) {
    // A view on a Distributed table sees only the inserts its own node forwards.
    throw new Error(`rollups are not kept on a ClickHouse cluster yet (database ${database})`);
  }
  const existing = present ? parseSpec(present.comment) : undefined;
  if (setting === undefined || (setting === true && existing)) {
    return {
      settled: true,
      rollups: existing && new ClickHouseRollups(client, database, existing),
    };
  }
  if (typeof setting === 'object' && existing && specComment(existing) === specComment(setting)) {
    return { settled: true, rollups: new ClickHouseRollups(client, database, existing) };
  }
  // Without rollups to drop, nothing more to do (most opens: a DDL statement is not free).
  if (setting === false && !present) return { settled: true, rollups: undefined };
  return { settled: false };
}

/** Drops the rollups, and with a spec (or `true`: counts alone) builds them anew from the events. */
async function buildRollups(
  client: ClickHouseClient,
  database: string,
  setting: RollupSpec | boolean,
  columns: KeyColumnLookup,
): Promise<ClickHouseRollups | undefined> {
  const db = quoteClickHouseIdentifier(database);
  const table = `${db}.${quoteClickHouseIdentifier(ROLLUPS_TABLE)}`;
  const view = `${db}.${quoteClickHouseIdentifier(ROLLUPS_VIEW)}`;
  await client.command({ query: `DROP VIEW IF EXISTS ${view}` });
  await client.command({ query: `DROP TABLE IF EXISTS ${table}` });
  if (setting === false) return undefined;
  const spec = setting === true ? { keys: [], sums: [] } : setting;
  const events = `${db}.${quoteClickHouseIdentifier(EVENTS_TABLE)}`;
  await client.command({ query: tableSql(table, spec) });
  await client.command({
    query: `CREATE MATERIALIZED VIEW ${view} TO ${table} AS ${rollupSelectSql(events, spec, columns)}`,
  });
  await client.command({
    query: `INSERT INTO ${table} ${rollupSelectSql(events, spec, columns)}`,
  });
  // Only a table whose rows were all added says what it keeps: one cut short is built again.
  await client.command({
    query: `ALTER TABLE ${table} MODIFY COMMENT ${clickHouseStringLiteral(specComment(spec))}`,
  });
  return new ClickHouseRollups(client, database, spec);
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
