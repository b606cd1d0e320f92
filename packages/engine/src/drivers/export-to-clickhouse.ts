import type { ClickHouseClient } from '@clickhouse/client-web';
import { registerCollection } from '../storage/clickhouse/clickhouse-collections.ts';
import { insertTsv } from '../storage/clickhouse/clickhouse-ingest.ts';
import { KeyColumns } from '../storage/clickhouse/clickhouse-key-columns.ts';
import { tsvRows } from '../storage/clickhouse/clickhouse-rows.ts';
import {
  RESERVED_NAMES,
  workspaceDatabase,
  workspaceSchema,
} from '../storage/clickhouse/clickhouse-schema.ts';
import { ingestOrderSql, type Segment } from '../storage/duckdb/catalog.ts';
import type { WorkspaceDb } from '../storage/duckdb/workspace-db.ts';
import { connectClickHouse } from './clickhouse/clickhouse-connection.ts';
import type { ClickHouseOptions } from './clickhouse/clickhouse-driver.ts';

/** Events per insert: one ClickHouse part each, small enough to hold in memory twice. */
const BATCH_EVENTS = 100_000;
/** How long one batch's insert may take. */
const EXPORT_TIMEOUT_MS = 300_000;

/** What an export did, per collection. */
export interface ExportResult {
  collections: Array<{ name: string; events: number }>;
}

/** Options of {@link exportToClickHouse}. */
export interface ExportOptions {
  /** Told after each batch, for a progress line. */
  onBatch?: (collection: string, events: number) => void;
}

/**
 * Copies every collection of a DuckDB workspace into the workspace's database in ClickHouse
 * (created as `serve --clickhouse` creates it), events in ingest order: `seq` is each event's
 * place in its collection, so Samples page through the same order on both drivers, and events
 * ingested later through ClickHouse (whose `seq` starts with the time of arrival in ms) sort
 * after them within a second. Each batch carries an insert deduplication token made of the
 * collection, its place and its size, so an export that is run again (after an interruption,
 * or twice) does not write the batches ClickHouse already has. The key paths DuckDB typed get
 * form columns (under `clickhouse.keyColumns` only, where given), filled in JavaScript as
 * ingest fills them; with `clickhouse.sortField`, the parts are written with the sort projection.
 */
export async function exportToClickHouse(
  db: WorkspaceDb,
  workspace: string,
  clickhouse: ClickHouseOptions,
  options: ExportOptions = {},
): Promise<ExportResult> {
  const database = workspaceDatabase(clickhouse.databasePrefix ?? 'analytics_', workspace);
  const client = connectClickHouse(clickhouse, { requestTimeoutMs: EXPORT_TIMEOUT_MS });
  const result: ExportResult = { collections: [] };
  try {
    for (const statement of workspaceSchema(database)) await client.command({ query: statement });
    const columns = new KeyColumns(client, database, {
      keys: clickhouse.keyColumns,
      ...(clickhouse.sortField !== undefined ? { sortField: clickhouse.sortField } : {}),
    });
    await columns.open();
    const entries = db.catalog.list();
    for (const entry of entries) {
      if (RESERVED_NAMES.has(entry.name)) {
        throw new Error(`collection '${entry.name}' has a name ClickHouse's storage reserves`);
      }
    }
    // Every collection's columns first, then the sort projection holding them all: the batches
    // are then written with their forms and the projection, as a load writes them, rather than
    // a mutation rewriting the table afterwards.
    for (const entry of entries) {
      await registerCollection(client, database, entry.name);
      // A key DuckDB gave no column held only objects, which have no forms.
      await columns.ensure(
        entry.keys.map((key) => ({
          path: key.path,
          kinds: new Set([key.hasString || key.hasNumber || key.hasArray ? 'string' : 'object']),
        })),
      );
    }
    await columns.project();
    const target = { client, database, columns };
    for (const entry of entries) {
      let seq = 0;
      for (const segment of entry.segments) {
        seq = await exportSegment(db, target, entry.name, segment, seq, options);
      }
      result.collections.push({ name: entry.name, events: seq });
    }
  } finally {
    await client.close();
  }
  return result;
}

/** Copies one event table in ingest order; returns the next `seq`. */
async function exportSegment(
  db: WorkspaceDb,
  {
    client,
    database,
    columns,
  }: { client: ClickHouseClient; database: string; columns: KeyColumns },
  collection: string,
  segment: Segment,
  firstSeq: number,
  options: ExportOptions,
): Promise<number> {
  let seq = firstSeq;
  for (let offset = 0; ; offset += BATCH_EVENTS) {
    const rows = await db.read(async (conn) => {
      const reader = await conn.runAndReadAll(
        `SELECT "timestamp", "json" FROM ${segment.table} ORDER BY ${ingestOrderSql(segment)} LIMIT ${BATCH_EVENTS} OFFSET ${offset}`,
      );
      return reader.getRows();
    });
    if (rows.length === 0) return seq;
    const start = seq;
    const events = rows.map(([timestamp, json]) => ({
      collection,
      timestamp: Number(timestamp),
      seq: String(seq++),
      payload: String(json),
    }));
    const token = `export:${collection}:${start}:${events.length}`;
    await insertTsv(client, database, tsvRows(events, columns.forms()), token);
    options.onBatch?.(collection, seq);
    if (rows.length < BATCH_EVENTS) return seq;
  }
}
