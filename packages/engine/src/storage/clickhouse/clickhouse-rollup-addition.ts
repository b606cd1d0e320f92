import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client-web';
import { MAX_ROLLUP_KEYS, type RollupSpec } from '../rollup-spec.ts';
import type { RollupUses } from '../rollup-usage.ts';
import { awaitBuildLock, releaseBuildLock, takeBuildLock } from './clickhouse-build-lock.ts';
import type { KeyColumnLookup } from './clickhouse-key-columns.ts';
import {
  type ClickHouseRollups,
  currentTable,
  dropRollupTable,
  formsSql,
  listRollupTables,
  rollupSelectSql,
  specComment,
  tableSql,
} from './clickhouse-rollups.ts';
import { EVENTS_TABLE, ROLLUPS_TABLE, rollupViewName } from './clickhouse-schema.ts';
import { clickHouseStringLiteral, quoteClickHouseIdentifier } from './clickhouse-sql-text.ts';

/**
 * Automatic rollup keys on ClickHouse: a key or metric is added by building a wider rollup table
 * beside the one read, filled by its own materialized view and from the events, then read
 * instead once its comment says it is complete (`clickhouse-rollups.ts`).
 *
 * An INSERT writes only into the views that existed when it started, so the new view takes the
 * events whose `_inserted` (ClickHouse's clock at the insert) is at or past a boundary set ahead,
 * which every earlier insert must end before, and the backfill takes the rest once every insert
 * that may still write one ended: each event is counted once. Engines sharing the ClickHouse add
 * under the workspace's build lock, each first taking up the table another added, and a table's
 * name derives from its keys, so two that decide at once add one table.
 */

/** The event table's column holding when ClickHouse wrote each event's block (`DEFAULT now64(3)`). */
export const INSERTED_COLUMN = '_inserted';
/** How far ahead of ClickHouse's clock the boundary is set, in milliseconds (per attempt). */
const BOUNDARY_AHEAD_MS = 500;
/** Attempts at a boundary before the addition gives up. */
const BOUNDARY_ATTEMPTS = 3;
/** How often the inserts an addition waits for are looked at again. */
const POLL_MS = 50;

/** What an addition needs of the workspace: the form columns its keys are read from. */
export interface AdditionColumns {
  /** Makes the top-level keys' form columns where missing, and answers the columns there are. */
  ensure(names: readonly string[]): Promise<KeyColumnLookup>;
}

/**
 * Adds `add`'s keys and sums to the workspace's rollups (after those of the table read now,
 * which another engine may have widened meanwhile), and makes `rollups` read the new table.
 * Answers the spec now kept, or undefined where the workspace keeps no complete rollups.
 */
export async function extendClickHouseRollups(
  client: ClickHouseClient,
  rollups: ClickHouseRollups,
  add: RollupUses,
  columns: AdditionColumns,
): Promise<RollupSpec | undefined> {
  const { database } = rollups;
  for (;;) {
    if (await takeBuildLock(client, database)) {
      try {
        const { tables } = await listRollupTables(client, database);
        const current = currentTable(tables);
        if (!current) return undefined;
        rollups.adopt(current);
        const wider = (kept: readonly string[], more: readonly string[]) =>
          [...kept, ...more.filter((name) => !kept.includes(name))].slice(
            0,
            Math.max(kept.length, MAX_ROLLUP_KEYS),
          );
        const next = {
          keys: wider(current.spec.keys, add.keys),
          sums: wider(current.spec.sums, add.sums),
        };
        if (specComment(next) === specComment(current.spec)) return current.spec;
        // A table without a comment is an addition cut short: nobody else builds under the lock.
        for (const t of tables) if (!t.spec) await dropRollupTable(client, database, t.name);
        await ensureInsertedColumn(client, database);
        const lookup = await columns.ensure([...add.keys, ...add.sums]);
        const name = generationName(next);
        await buildGeneration(client, database, name, next, lookup);
        rollups.adopt({ name, spec: next, age: 0 });
        return next;
      } finally {
        await releaseBuildLock(client, database);
      }
    }
    await awaitBuildLock(client, database);
  }
}

/** The distinct string forms top-level key `name` has across the workspace's events. */
export async function keyValueCount(
  client: ClickHouseClient,
  database: string,
  name: string,
  columns: KeyColumnLookup,
): Promise<number> {
  const events = `${quoteClickHouseIdentifier(database)}.${quoteClickHouseIdentifier(EVENTS_TABLE)}`;
  const result = await client.query({
    query: `SELECT uniqExact(${formsSql(name, columns).string}) FROM ${events}`,
    format: 'JSONCompactEachRow',
  });
  const [row] = await result.json<Array<number | string>>();
  return Number(row?.[0] ?? 0);
}

/** A rollup table's name from what it keeps, the same on every engine. */
function generationName(spec: RollupSpec): string {
  const hash = createHash('sha256').update(specComment(spec)).digest('hex').slice(0, 16);
  return `${ROLLUPS_TABLE}_${hash}`;
}

/** Builds rollup table `name` kept by `spec`, with its view, and fills it from the events. */
async function buildGeneration(
  client: ClickHouseClient,
  database: string,
  name: string,
  spec: RollupSpec,
  columns: KeyColumnLookup,
): Promise<void> {
  const db = quoteClickHouseIdentifier(database);
  const table = `${db}.${quoteClickHouseIdentifier(name)}`;
  const view = `${db}.${quoteClickHouseIdentifier(rollupViewName(name))}`;
  const events = `${db}.${quoteClickHouseIdentifier(EVENTS_TABLE)}`;
  const inserted = quoteClickHouseIdentifier(INSERTED_COLUMN);
  let boundary = 0;
  for (let attempt = 1; ; attempt++) {
    // A new table each attempt: an insert may still write into the last one's through its view.
    await dropRollupTable(client, database, name);
    await client.command({ query: tableSql(table, spec) });
    boundary = (await serverMs(client)) + BOUNDARY_AHEAD_MS * attempt;
    const at = `fromUnixTimestamp64Milli(toInt64(${boundary}), 'UTC')`;
    await client.command({
      query: `CREATE MATERIALIZED VIEW ${view} TO ${table} AS ${rollupSelectSql(events, spec, columns, `${inserted} >= ${at}`)}`,
    });
    // Inserts that started before the view do not write into it: each must end before the boundary.
    await insertsEnded(client, database);
    if ((await serverMs(client)) < boundary) break;
    await dropRollupTable(client, database, name);
    if (attempt >= BOUNDARY_ATTEMPTS) {
      throw new Error('inserts outlasted every boundary of the rollup addition');
    }
  }
  // Past the boundary, every insert that may still write an event before it is running now.
  for (let now = await serverMs(client); now < boundary; now = await serverMs(client)) {
    await new Promise((resolve) => setTimeout(resolve, boundary - now));
  }
  await insertsEnded(client, database);
  const at = `fromUnixTimestamp64Milli(toInt64(${boundary}), 'UTC')`;
  await client.command({
    query: `INSERT INTO ${table} ${rollupSelectSql(events, spec, columns, `${inserted} < ${at}`)}`,
  });
  await client.command({
    query: `ALTER TABLE ${table} MODIFY COMMENT ${clickHouseStringLiteral(specComment(spec))}`,
  });
}

/** ClickHouse's clock, in Unix milliseconds. */
async function serverMs(client: ClickHouseClient): Promise<number> {
  const result = await client.query({
    query: 'SELECT toUnixTimestamp64Milli(now64(3))',
    format: 'JSONCompactEachRow',
  });
  const [row] = await result.json<Array<number | string>>();
  return Number(row?.[0]);
}

/** Resolves once every insert into the workspace's event table running now has ended. */
async function insertsEnded(client: ClickHouseClient, database: string): Promise<void> {
  const running = async () => {
    const result = await client.query({
      query: `SELECT query_id FROM system.processes
        WHERE query_kind = 'Insert' AND position(query, {db:String}) > 0
          AND position(query, {events:String}) > 0`,
      query_params: { db: database, events: EVENTS_TABLE },
      format: 'JSONEachRow',
    });
    return (await result.json<{ query_id: string }>()).map((row) => row.query_id);
  };
  const waited = new Set(await running());
  while (waited.size > 0) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const still = new Set(await running());
    for (const id of waited) if (!still.has(id)) waited.delete(id);
  }
}

/**
 * Gives the event table its {@link INSERTED_COLUMN} where it lacks it: zero in every event
 * there is (written, not left to the DEFAULT, which a part without the column would read as the
 * clock of the query reading it), then the clock for every insert from there on.
 */
async function ensureInsertedColumn(client: ClickHouseClient, database: string): Promise<void> {
  const result = await client.query({
    query: `SELECT default_expression FROM system.columns
      WHERE database = {db:String} AND table = {events:String} AND name = {column:String}`,
    query_params: { db: database, events: EVENTS_TABLE, column: INSERTED_COLUMN },
    format: 'JSONEachRow',
  });
  const [column] = await result.json<{ default_expression: string }>();
  if (column?.default_expression.startsWith('now64')) return;
  const events = `${quoteClickHouseIdentifier(database)}.${quoteClickHouseIdentifier(EVENTS_TABLE)}`;
  const type = `${quoteClickHouseIdentifier(INSERTED_COLUMN)} DateTime64(3, 'UTC')`;
  await client.command({
    query: `ALTER TABLE ${events} ADD COLUMN IF NOT EXISTS ${type} DEFAULT 0 CODEC(Delta, ZSTD(1))`,
  });
  // A part an insert that began before the column writes lacks it: the mutation must see it.
  await insertsEnded(client, database);
  await client.command({
    query: `ALTER TABLE ${events} MATERIALIZE COLUMN ${quoteClickHouseIdentifier(INSERTED_COLUMN)}`,
    clickhouse_settings: { mutations_sync: '2' },
  });
  await client.command({
    query: `ALTER TABLE ${events} MODIFY COLUMN ${type} DEFAULT now64(3) CODEC(Delta, ZSTD(1))`,
  });
}
