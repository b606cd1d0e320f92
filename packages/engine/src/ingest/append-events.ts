import type { CollectionEntry } from '../storage/duckdb/catalog.ts';
import { addKeyColumns, insertEvents } from '../storage/duckdb/key-typing.ts';
import type { WriteTransaction } from '../storage/duckdb/workspace-db.ts';
import type { SeenKey } from '../storage/seen-key.ts';
import { discoverObjectKeys } from './discover-keys.ts';
import { type EventRecord, recordsRelation } from './event-records.ts';

export type { BadLine } from './parse-ndjson.ts';

/**
 * Appends validated events to a collection draft inside the caller's transaction. `keys` is
 * their key discovery when the caller already ran it (the loader does, off the write path).
 */
export async function appendRecords(
  tx: WriteTransaction,
  draft: CollectionEntry,
  records: EventRecord[],
  keys?: SeenKey[],
): Promise<number> {
  if (records.length === 0) return 0;
  const discovered =
    keys ??
    discoverObjectKeys(
      records.map((r) => r.json ?? (JSON.parse(r.payload) as Record<string, unknown>)),
    );
  await addKeyColumns(tx, draft, discovered);
  return insertEvents(
    tx.conn,
    draft,
    discovered,
    (params) => recordsRelation(records, params),
    undefined,
    records,
  );
}
