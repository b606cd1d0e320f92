import type { CollectionEntry } from '../storage/duckdb/catalog.ts';
import { addKeyColumns, insertEvents, needsKeyColumns } from '../storage/duckdb/key-typing.ts';
import type { SqlParams } from '../storage/duckdb/sql-params.ts';
import type { WorkspaceConnection, WorkspaceDb } from '../storage/duckdb/workspace-db.ts';
import type { SeenKey } from './discover-keys.ts';

/** Staged events ready to append, in file order. */
export interface StagedBatch {
  /** Their key discovery. */
  keys: SeenKey[];
  /** How many events the source holds; DuckDB must read exactly these. */
  events: number;
  /** The `(ts, payload)` relation to read them from, adding its own parameters. */
  source: (params: SqlParams) => string;
  /** Called once the events are appended (not yet committed), e.g. to remove a staged file. */
  appended?: () => Promise<void>;
}

interface Writer {
  conn: WorkspaceConnection;
  /** The writer's queued work: its appends and commits, one after another. */
  chain: Promise<void>;
  /** Its appends queued and not yet done, oldest first, with their sizes. */
  queued: Array<{ done: Promise<void>; events: number }>;
  open: boolean;
  uncommitted: number;
}

/**
 * The loader's writers: several DuckDB connections appending to one collection at once, each in
 * transactions of at least `commitEvents` events, committed in file order.
 *
 * DuckDB's insert of staged events runs on one thread per statement (CSV reading, JSON
 * extraction of the typed columns, compression); two statements on two connections use two
 * cores, which a single statement with two threads does not (the parallel CSV reader costs more
 * than it gains). Appends to one table from concurrent transactions never conflict.
 * Consecutive batches go to the same writer until its transaction holds `commitEvents`, then the
 * next writer takes over; a writer commits only after the writer before it has, so rows keep
 * the file's order (row ids follow commit order) and a load stopped midway keeps a prefix of
 * the file. Schema changes (the collection itself, columns for new keys) cannot run beside open
 * appends: the writers commit what they hold, the change commits in a transaction of its own
 * through the workspace's writer, and the appends go on with the new columns.
 */
export class LoadWriters {
  readonly #db: WorkspaceDb;
  readonly #collection: string;
  readonly #commitEvents: number;
  readonly #writers: Writer[] = [];
  #current = 0;
  /** The last commit queued: the next one waits for it. */
  #lastCommit: Promise<void> = Promise.resolve();
  #failure: unknown;
  #failed = false;

  private constructor(db: WorkspaceDb, collection: string, commitEvents: number) {
    this.#db = db;
    this.#collection = collection;
    this.#commitEvents = commitEvents;
  }

  /** Opens `count` writer connections to `db` (at least one). */
  static async open(
    db: WorkspaceDb,
    collection: string,
    options: { writers: number; commitEvents: number },
  ): Promise<LoadWriters> {
    const writers = new LoadWriters(db, collection, options.commitEvents);
    for (let i = 0; i < Math.max(1, options.writers); i++) {
      writers.#writers.push({
        conn: await db.connect(),
        chain: Promise.resolve(),
        queued: [],
        open: false,
        uncommitted: 0,
      });
    }
    return writers;
  }

  /**
   * Queues a batch behind the ones before it. Resolves once it is queued, after waiting while
   * its writer has more than a transaction's worth of events waiting: enough that every writer
   * has work queued while the next one's batches are being parsed, and a bound on the staged
   * files waiting. Rejects once any queued work has failed.
   */
  async append(batch: StagedBatch): Promise<void> {
    this.#check();
    const entry = await this.#schemaFor(batch.keys);
    const writer = this.#writers[this.#current] as Writer;
    const appended = this.#queue(writer, async () => {
      if (!writer.open) {
        await writer.conn.run('BEGIN TRANSACTION');
        writer.open = true;
      }
      const written = await insertEvents(writer.conn, entry, batch.keys, batch.source);
      if (written !== batch.events) {
        throw new Error(`staged ${batch.events} events, but DuckDB read ${written}`);
      }
      await batch.appended?.();
    });
    writer.queued.push({ done: appended, events: batch.events });
    writer.uncommitted += batch.events;
    if (writer.uncommitted >= this.#commitEvents) this.#commitCurrent();
    while (writer.queued.reduce((sum, q) => sum + q.events, 0) > this.#commitEvents) {
      await (writer.queued[0] as { done: Promise<void> }).done;
      writer.queued.shift();
    }
    this.#check();
  }

  /** Commits everything queued, in order. */
  async finish(): Promise<void> {
    this.#check();
    this.#commitCurrent();
    await this.#lastCommit;
    this.#check();
  }

  /** Rolls back what was not committed and closes the connections. */
  async close(): Promise<void> {
    await Promise.all(this.#writers.map((w) => w.chain));
    for (const writer of this.#writers) {
      if (writer.open) await writer.conn.run('ROLLBACK').catch(() => undefined);
      writer.conn.closeSync();
    }
  }

  /**
   * The collection's entry with columns for `keys`, making the schema change first when one is
   * needed (after everything queued so far has committed).
   */
  async #schemaFor(keys: SeenKey[]): Promise<CollectionEntry> {
    let entry = this.#db.catalog.get(this.#collection);
    if (!entry || needsKeyColumns(entry, keys)) {
      await this.finish();
      await this.#db.write(async (tx) => {
        await addKeyColumns(tx, await tx.collection(this.#collection), keys);
      });
      entry = this.#db.catalog.get(this.#collection) as CollectionEntry;
    }
    return entry;
  }

  /** Queues the current writer's commit after the one before it; the next writer takes over. */
  #commitCurrent(): void {
    const writer = this.#writers[this.#current] as Writer;
    if (writer.uncommitted === 0) return;
    const previous = this.#lastCommit;
    this.#lastCommit = this.#queue(writer, async () => {
      await previous;
      // The transaction before this one may have failed while this one waited for it: then
      // this one must not commit either, or the collection would hold events after a gap (close
      // rolls it back).
      if (this.#failed) return;
      await writer.conn.run('COMMIT');
      writer.open = false;
    });
    writer.uncommitted = 0;
    this.#current = (this.#current + 1) % this.#writers.length;
  }

  /**
   * Runs `work` after the writer's queued work. The writer's chain itself never rejects (so a
   * later step can wait on it); the first failure is kept and every later step is skipped.
   */
  #queue(writer: Writer, work: () => Promise<void>): Promise<void> {
    const step = writer.chain.then(() => {
      if (this.#failed) return;
      return work().catch((error: unknown) => {
        if (!this.#failed) {
          this.#failed = true;
          this.#failure = error;
        }
      });
    });
    writer.chain = step;
    return step;
  }

  #check(): void {
    if (this.#failed) throw this.#failure;
  }
}
