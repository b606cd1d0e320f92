import type { WorkspaceDb } from '../storage/workspace-db.ts';
import { appendRecords } from './append-events.ts';
import { mergeKeys, type SeenKey } from './discover-keys.ts';
import type { EventRecord } from './event-records.ts';
import type { IngestBatch } from './ingest-request.ts';

interface Job extends IngestBatch {
  resolve(): void;
  reject(error: unknown): void;
}

/** Events per transaction at most; more waiting requests go into the next one. */
const MAX_GROUP_EVENTS = 100_000;

/**
 * Group commit for HTTP ingest. Requests queue up while a transaction is running; the next
 * transaction writes all of them and commits once (one WAL sync), and only then does each
 * request's promise resolve. So every acknowledged event is durable, and concurrent writers
 * share the cost of the sync instead of paying it one by one.
 */
export class WriteQueue {
  readonly #db: WorkspaceDb;
  #pending: Job[] = [];
  #running: Promise<void> | undefined;

  constructor(db: WorkspaceDb) {
    this.#db = db;
  }

  /** Resolves once the events are committed. */
  submit(batch: IngestBatch): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ ...batch, resolve, reject });
      this.#running ??= this.#drain().finally(() => {
        this.#running = undefined;
      });
    });
  }

  /** Resolves when everything submitted so far is committed (or failed). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** Writes the jobs' events in one transaction, collection by collection. */
  async #commit(jobs: Job[]): Promise<void> {
    const byCollection = new Map<string, { records: EventRecord[]; keys: SeenKey[][] }>();
    for (const job of jobs) {
      let group = byCollection.get(job.collection);
      if (!group) {
        group = { records: [], keys: [] };
        byCollection.set(job.collection, group);
      }
      for (const record of job.records) group.records.push(record);
      group.keys.push(job.keys);
    }
    await this.#db.write(async (tx) => {
      for (const [name, { records, keys }] of byCollection) {
        // A collection comes into being with its first event, not with an empty request.
        if (records.length > 0) {
          const draft = await tx.collection(name);
          await appendRecords(
            tx.conn,
            draft,
            records,
            keys.length === 1 ? keys[0] : mergeKeys(keys),
          );
        }
      }
    });
  }

  async #drain(): Promise<void> {
    while (this.#pending.length > 0) {
      let events = 0;
      let take = 0;
      while (take < this.#pending.length && (take === 0 || events < MAX_GROUP_EVENTS)) {
        events += this.#pending[take]?.records.length ?? 0;
        take++;
      }
      const jobs = this.#pending.splice(0, take);
      try {
        await this.#commit(jobs);
        for (const job of jobs) job.resolve();
      } catch (error) {
        if (jobs.length === 1) (jobs[0] as Job).reject(error);
        // One request's events must not sink the others that shared its transaction: retry
        // each alone, so only the culprit fails.
        else {
          for (const job of jobs) {
            await this.#commit([job]).then(job.resolve, job.reject);
          }
        }
      }
    }
  }
}
