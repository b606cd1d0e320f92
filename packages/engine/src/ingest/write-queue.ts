import type { WorkspaceDb } from '../storage/duckdb/workspace-db.ts';
import { appendRecords } from './append-events.ts';
import { mergeKeys, type SeenKey } from './discover-keys.ts';
import { type EventRecord, recordsRelation } from './event-records.ts';
import type { IngestBatch } from './ingest-request.ts';
import { insertEvents, needsKeyColumns } from './type-keys.ts';

interface Job extends IngestBatch {
  resolve(): void;
  reject(error: unknown): void;
  /** Set when the job is retried in a transaction of its own. */
  alone?: boolean;
}

/** Events per transaction at most; more waiting requests go into the next one. */
const MAX_GROUP_EVENTS = 100_000;

/**
 * Transactions appending at once. DuckDB runs each insert on one thread and appends from
 * concurrent transactions never conflict, so a second transaction inserts and syncs its WAL
 * while the first does, and the requests parsed meanwhile do not wait for both.
 */
const APPENDERS = 2;

/**
 * Group commit for HTTP ingest. Requests queue up while transactions are running; the next
 * transaction writes all of them and commits once (one WAL sync), and only then does each
 * request's promise resolve. So every acknowledged event is durable, and concurrent writers
 * share the cost of the sync instead of paying it one by one. Up to {@link APPENDERS}
 * transactions append at once; one that needs a schema change (a new collection, columns for
 * new keys) runs alone through the workspace's writer.
 */
export class WriteQueue {
  readonly #db: WorkspaceDb;
  #pending: Job[] = [];
  #running = 0;
  readonly #idle: Array<() => void> = [];

  constructor(db: WorkspaceDb) {
    this.#db = db;
  }

  /** Resolves once the events are committed. */
  submit(batch: IngestBatch): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ ...batch, resolve, reject });
      this.#pump();
    });
  }

  /** Resolves when everything submitted so far is committed (or failed). */
  idle(): Promise<void> {
    if (this.#running === 0 && this.#pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Starts transactions for waiting jobs while fewer than {@link APPENDERS} run. */
  #pump(): void {
    while (this.#running < APPENDERS && this.#pending.length > 0) {
      const jobs = this.#takeGroup();
      this.#running++;
      this.#run(jobs).finally(() => {
        this.#running--;
        this.#pump();
        if (this.#running === 0 && this.#pending.length === 0) {
          for (const resolve of this.#idle.splice(0)) resolve();
        }
      });
    }
  }

  /** The oldest waiting jobs, up to {@link MAX_GROUP_EVENTS}; a job to retry goes alone. */
  #takeGroup(): Job[] {
    let events = 0;
    let take = 0;
    while (take < this.#pending.length && (take === 0 || events < MAX_GROUP_EVENTS)) {
      const job = this.#pending[take] as Job;
      if (job.alone && take > 0) break;
      events += job.records.length;
      take++;
      if (job.alone) break;
    }
    return this.#pending.splice(0, take);
  }

  async #run(jobs: Job[]): Promise<void> {
    try {
      await this.#commit(jobs);
      for (const job of jobs) job.resolve();
    } catch (error) {
      if (jobs.length === 1) (jobs[0] as Job).reject(error);
      else {
        // One request's events must not sink the others that shared its transaction: each is
        // tried again alone, so only the culprit fails.
        for (const job of jobs) job.alone = true;
        this.#pending.unshift(...jobs);
      }
    }
  }

  /** Writes the jobs' events in one transaction, collection by collection. */
  async #commit(jobs: Job[]): Promise<void> {
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
        await insertEvents(conn, entry, keys, (params) => recordsRelation(records, params));
      }
    });
  }
}
