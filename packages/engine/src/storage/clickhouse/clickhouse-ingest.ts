import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { IngestBatch } from '../../ingest/ingest-request.ts';
import { EVENTS_TABLE, quoteClickHouseIdentifier } from './clickhouse-schema.ts';

/** Attempts of one insert when the connection to ClickHouse fails (not when ClickHouse refuses). */
const ATTEMPTS = 3;

/**
 * Writes a batch and resolves only once ClickHouse has acknowledged it (a synchronous insert).
 * Every attempt carries the same `insert_deduplication_token`, so an attempt that reached
 * ClickHouse before its connection broke is not written twice by the retry; a token is drawn
 * per request, so two requests with the same events are both kept, as the DuckDB driver does.
 */
export async function insertBatch(
  client: ClickHouseClient,
  database: string,
  batch: IngestBatch,
  isConnectionError: (error: unknown) => boolean,
): Promise<void> {
  const token = randomUUID();
  // Orders events within a second as they arrived: the request's millisecond, then its index.
  const ms = String(Date.now());
  const values = batch.records.map((r, i) => ({
    collection: batch.collection,
    timestamp: r.timestamp,
    seq: `${ms}${String(i).padStart(5, '0')}`,
    json: r.payload,
  }));
  for (let attempt = 1; ; attempt++) {
    try {
      await insertEvents(client, database, values, token);
      return;
    } catch (error) {
      if (attempt >= ATTEMPTS || !isConnectionError(error)) throw error;
    }
  }
}

/** One row of the event table as inserted (64-bit integers as text or numbers). */
export interface EventRow {
  collection: string;
  timestamp: number | string;
  seq: string;
  json: string;
}

/**
 * One synchronous insert into a workspace's event table, answered once ClickHouse has the rows
 * (through a Distributed table, once the shards have them), deduplicated by `token`.
 */
export async function insertEvents(
  client: ClickHouseClient,
  database: string,
  values: EventRow[],
  token: string,
): Promise<void> {
  await client.insert({
    table: `${quoteClickHouseIdentifier(database)}.${quoteClickHouseIdentifier(EVENTS_TABLE)}`,
    columns: ['collection', 'timestamp', 'seq', 'json'],
    values,
    format: 'JSONEachRow',
    clickhouse_settings: {
      async_insert: 0,
      insert_distributed_sync: 1,
      insert_deduplicate: 1,
      insert_deduplication_token: token,
    },
  });
}
