import { insertEvents, needsKeyColumns } from '../storage/duckdb/key-typing.ts';
import type { WorkspaceDb } from '../storage/duckdb/workspace-db.ts';
import type { IngestBatch } from '../storage/ingest-batch.ts';
import { appendRecords } from './append-events.ts';
import { mergeKeys, type SeenKey } from './discover-keys.ts';
import { type EventRecord, recordsRelation } from './event-records.ts';
import { GroupCommit } from './group-commit.ts';

/** Events per transaction at most; more waiting requests go into the next one. */
const MAX_GROUP_EVENTS = 100_000;

/**
 * Transactions appending at once. DuckDB runs each insert on one thread and appends from
 * concurrent transactions never conflict, so a second transaction inserts and syncs its WAL
 * while the first does, and the requests parsed meanwhile do not wait for both.
 */
const APPENDERS = 2;

/**
 * Group commit for HTTP ingest ({@link GroupCommit}): requests queue up while transactions are
 * running; the next transaction writes all of them and commits once (one WAL sync), and only
 * then does each request's promise resolve. So every acknowledged event is durable, and
 * concurrent writers share the cost of the sync instead of paying it one by one. Up to
 * {@link APPENDERS} transactions append at once; batches that need a schema change (a new
 * collection, columns or catalog rows for new keys) queue apart and run one at a time, alone,
 * through the workspace's writer, so an append never waits in a group behind one.
 */
export class WriteQueue {
  readonly #db: WorkspaceDb;
  /** Batches whose collection already has what they need: appended beside each other. */
  readonly #appends: GroupCommit<IngestBatch>;
  /**
   * Batches that change the schema (a new collection, new keys), kept apart so that a batch
   * waiting for one never holds up batches that only append.
   */
  readonly #changes: GroupCommit<IngestBatch>;

  constructor(db: WorkspaceDb) {
    this.#db = db;
    const options = {
      maxSize: MAX_GROUP_EVENTS,
      sizeOf: (batch: IngestBatch) => batch.records.length,
    };
    this.#appends = new GroupCommit((jobs) => this.#commit(jobs), {
      ...options,
      concurrency: APPENDERS,
    });
    this.#changes = new GroupCommit((jobs) => this.#commit(jobs), { ...options, concurrency: 1 });
  }

  /** Resolves once the events are committed. */
  submit(batch: IngestBatch): Promise<void> {
    const entry = this.#db.catalog.get(batch.collection);
    const appendOnly = entry !== undefined && !needsKeyColumns(entry, batch.keys);
    return (appendOnly ? this.#appends : this.#changes).submit(batch);
  }

  /** Resolves when everything submitted so far is committed (or failed). */
  async idle(): Promise<void> {
    await Promise.all([this.#appends.idle(), this.#changes.idle()]);
  }

  /** Writes the jobs' events in one transaction, collection by collection. */
  async #commit(jobs: IngestBatch[]): Promise<void> {
    const groups = new Map<string, { records: EventRecord[]; keyLists: SeenKey[][] }>();
    for (const job of jobs) {
      // A collection comes into being with its first event, not with an empty request.
      if (job.records.length === 0) continue;
      let group = groups.get(job.collection);
      if (!group) {
        group = { records: [], keyLists: [] };
        groups.set(job.collection, group);
      }
      for (const record of job.records) group.records.push(record);
      group.keyLists.push(job.keys);
    }
    if (groups.size === 0) return;
    const byCollection = [...groups].map(([name, { records, keyLists }]) => ({
      name,
      records,
      keys: keyLists.length === 1 ? (keyLists[0] as SeenKey[]) : mergeKeys(keyLists),
    }));
    const catalog = this.#db.catalog;
    const schemaChange = byCollection.some(({ name, keys }) => {
      const entry = catalog.get(name);
      return !entry || needsKeyColumns(entry, keys);
    });
    if (schemaChange) {
      await this.#db.write(async (tx) => {
        for (const { name, records, keys } of byCollection) {
          await appendRecords(tx, await tx.collection(name), records, keys);
        }
      });
      return;
    }
    await this.#db.append(async (conn) => {
      for (const { name, records, keys } of byCollection) {
        // Read inside the append: a schema change that committed meanwhile only added columns.
        const entry = catalog.get(name);
        if (!entry) throw new Error(`collection ${name} disappeared while appending`);
        await insertEvents(
          conn,
          entry,
          keys,
          (params) => recordsRelation(records, params),
          undefined,
          records,
        );
      }
    });
  }
}
