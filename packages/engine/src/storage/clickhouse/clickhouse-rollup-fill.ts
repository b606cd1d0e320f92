import type { ClickHouseClient } from '@clickhouse/client-web';
import type { RollupSpec } from '../rollup-spec.ts';
import type { KeyColumnLookup } from './clickhouse-key-columns.ts';
import { dropRollupTable, rollupSelectSql, specComment, tableSql } from './clickhouse-rollups.ts';
import {
  EVENTS_TABLE,
  INSERTED_COLUMN,
  insertedColumnSql,
  rollupViewName,
} from './clickhouse-schema.ts';
import { clickHouseStringLiteral, quoteClickHouseIdentifier } from './clickhouse-sql-text.ts';

/**
 * Fills a new rollup table while other engines may be inserting events. An INSERT writes only
 * into the views that existed when it started, so the table's view takes the events whose
 * `_inserted` (ClickHouse's clock at the insert) is at or past a boundary set ahead, which every
 * earlier insert must end before, and an INSERT … SELECT takes the rest once every insert that
 * may still write one ended: each event is counted once, whoever inserted it.
 */

/** How far ahead of ClickHouse's clock the first boundary is set, in milliseconds. */
const BOUNDARY_AHEAD_MS = 200;
/** How much further ahead each next attempt sets it. */
const BOUNDARY_GROWTH = 3;
/** Attempts at a boundary before the build gives up. */
const BOUNDARY_ATTEMPTS = 4;
/** How often the inserts a build waits for are looked at again. */
const POLL_MS = 50;

/**
 * Builds rollup table `name` kept by `spec`, with its view, and fills it from the events
 * (reading the form columns `columns` names); its comment, written last, says it is complete.
 * The event table must have its {@link INSERTED_COLUMN} clock ({@link ensureInsertedColumn}).
 */
export async function fillRollupTable(
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
  const at = (ms: number) => `fromUnixTimestamp64Milli(toInt64(${ms}), 'UTC')`;
  let boundary = 0;
  for (let attempt = 1; ; attempt++) {
    // A new table each attempt: an insert may still write into the last one's through its view.
    await dropRollupTable(client, database, name);
    await client.command({ query: tableSql(table, spec) });
    // Long inserts (a load's) end first, so that the boundary need not outlast them.
    await insertsEnded(client, database);
    const ahead = BOUNDARY_AHEAD_MS * BOUNDARY_GROWTH ** (attempt - 1);
    boundary = (await serverMs(client)) + ahead;
    await client.command({
      query: `CREATE MATERIALIZED VIEW ${view} TO ${table} AS ${rollupSelectSql(events, spec, columns, `${inserted} >= ${at(boundary)}`)}`,
    });
    // Inserts that started before the view do not write into it: each must end before the boundary.
    await insertsEnded(client, database);
    if ((await serverMs(client)) < boundary) break;
    await dropRollupTable(client, database, name);
    if (attempt >= BOUNDARY_ATTEMPTS) {
      throw new Error('inserts outlasted every boundary of the rollup build');
    }
  }
  // Past the boundary, every insert that may still write an event before it is running now.
  for (let now = await serverMs(client); now < boundary; now = await serverMs(client)) {
    await new Promise((resolve) => setTimeout(resolve, boundary - now));
  }
  await insertsEnded(client, database);
  await client.command({
    query: `INSERT INTO ${table} ${rollupSelectSql(events, spec, columns, `${inserted} < ${at(boundary)}`)}`,
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
 * Gives an event table made before it had one its {@link INSERTED_COLUMN}: zero in every event
 * there is (written, not left to the DEFAULT, which a part without the column would read as the
 * clock of the query reading it), then the clock for every insert from there on.
 */
export async function ensureInsertedColumn(
  client: ClickHouseClient,
  database: string,
): Promise<void> {
  const result = await client.query({
    query: `SELECT default_expression FROM system.columns
      WHERE database = {db:String} AND table = {events:String} AND name = {column:String}`,
    query_params: { db: database, events: EVENTS_TABLE, column: INSERTED_COLUMN },
    format: 'JSONEachRow',
  });
  const [column] = await result.json<{ default_expression: string }>();
  if (column?.default_expression.startsWith('now64')) return;
  const events = `${quoteClickHouseIdentifier(database)}.${quoteClickHouseIdentifier(EVENTS_TABLE)}`;
  await client.command({
    query: `ALTER TABLE ${events} ADD COLUMN IF NOT EXISTS ${insertedColumnSql('0')}`,
  });
  // A part an insert that began before the column writes lacks it: the mutation must see it.
  await insertsEnded(client, database);
  await client.command({
    query: `ALTER TABLE ${events} MATERIALIZE COLUMN ${quoteClickHouseIdentifier(INSERTED_COLUMN)}`,
    clickhouse_settings: { mutations_sync: '2' },
  });
  await client.command({
    query: `ALTER TABLE ${events} MODIFY COLUMN ${insertedColumnSql('now64(3)')}`,
  });
}
