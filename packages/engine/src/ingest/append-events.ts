import type { DuckDBConnection } from '@duckdb/node-api';
import type { CollectionEntry } from '../storage/catalog.ts';
import { type EventRecord, stagedProblems, stageNdjson, stageRecords } from './stage-events.ts';
import { addKeyColumns, discoverKeys, insertStaged } from './type-keys.ts';

/** A line that could not be loaded, with its 1-based number and the reason. */
export interface BadLine {
  line: number;
  reason: string;
}

/** Appends validated events to a collection draft inside the caller's transaction. */
export async function appendRecords(
  conn: DuckDBConnection,
  draft: CollectionEntry,
  records: EventRecord[],
): Promise<number> {
  if (records.length === 0) return 0;
  await stageRecords(conn, records);
  return typeAndInsert(conn, draft);
}

/**
 * Appends the good lines of an NDJSON chunk to a collection draft inside the caller's
 * transaction, and returns the bad ones with their line numbers.
 */
export async function appendNdjson(
  conn: DuckDBConnection,
  draft: CollectionEntry,
  text: string,
  firstLine: number,
): Promise<{ written: number; bad: BadLine[] }> {
  await stageNdjson(conn, text, firstLine);
  const written = await typeAndInsert(conn, draft);
  return { written, bad: await stagedProblems(conn) };
}

async function typeAndInsert(conn: DuckDBConnection, draft: CollectionEntry): Promise<number> {
  await addKeyColumns(conn, draft, await discoverKeys(conn));
  return insertStaged(conn, draft);
}
