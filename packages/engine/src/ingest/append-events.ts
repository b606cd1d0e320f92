import type { DuckDBConnection } from '@duckdb/node-api';
import type { CollectionEntry } from '../storage/catalog.ts';
import {
  type EventRecord,
  recordsRelation,
  STAGED_GOOD,
  stagedProblems,
  stageNdjson,
} from './stage-events.ts';
import {
  addKeyColumns,
  discoverObjectKeys,
  discoverStagedKeys,
  insertEvents,
} from './type-keys.ts';

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
  const objects = records.map((r) => r.json ?? (JSON.parse(r.payload) as Record<string, unknown>));
  await addKeyColumns(conn, draft, discoverObjectKeys(objects));
  return insertEvents(conn, draft, (params) => recordsRelation(records, params));
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
  await addKeyColumns(conn, draft, await discoverStagedKeys(conn));
  const written = await insertEvents(conn, draft, () => STAGED_GOOD);
  return { written, bad: await stagedProblems(conn) };
}
