import type { DuckDBConnection } from '@duckdb/node-api';
import type { RollupReads, RollupSpec } from '../rollup-spec.ts';
import type { RollupUses } from '../rollup-usage.ts';
import {
  CATALOG_DDL,
  Catalog,
  type CollectionEntry,
  collectionRelations,
  draftOf,
  ENGINE_SCHEMA,
} from './catalog.ts';
import {
  openLoaderInstance,
  openWorkspaceInstance,
  payloadColumnType,
  type WorkspaceInstance,
} from './db-config.ts';
import { type PlainValue, readPrepared } from './prepared-statements.ts';
import {
  coalesceRollups,
  extendRollups,
  keyValueCount,
  openRollups,
  type RollupLedger,
} from './rollups.ts';
import type { Statement } from './sql-params.ts';

/** A connection to a workspace's database, named here so that layers above never import DuckDB. */
export type WorkspaceConnection = DuckDBConnection;

/** How a workspace database is opened. */
export interface WorkspaceDbOptions {
  /** DuckDB memory limit, e.g. `'1GB'`. */
  memoryLimit?: string;
  /** DuckDB worker threads per query. */
  threads?: number;
  /** Connections kept for concurrent queries (default 4). */
  readers?: number;
  /**
   * WAL size that triggers a checkpoint (default 1GB): with DuckDB's much smaller default, a
   * steady stream of small commits rewrites the last row group over and over, while a larger WAL
   * costs only replay time after a crash.
   */
  checkpointThreshold?: string;
  /**
   * A directory whose files SQL may read (for `engine load`'s staged events); the database is
   * then opened with {@link openLoaderInstance}. Without it, no file is readable.
   */
  stagingDir?: string;
  /**
   * Keeps event counts per 15-minute span at ingest, which Count queries whose buckets are
   * whole spans read instead of the events (`rollups.ts`), per value of the spec's keys and with
   * its metrics' sums. A spec builds them when missing or kept by other keys, `true` builds them
   * when missing (keeping the file's keys),
   * `false` drops them; unset keeps (and keeps up) what the file has.
   */
  rollups?: boolean | RollupSpec;
  /** Whether queries weigh the rollups' rows against the events (default `'cheaper'`). */
  rollupReads?: RollupReads;
}

/** The writer's view of one transaction: collections it touches come back as drafts. */
export interface WriteTransaction {
  /** The writer connection, inside the open transaction. */
  conn: DuckDBConnection;
  /** The column type of payloads in this workspace's event tables. */
  payloadType: string;
  /** A draft of the named collection, created (table, view, catalog row) when missing. */
  collection(name: string): Promise<CollectionEntry>;
  /**
   * Commits what was written so far (publishing the collections it touched) and goes on in a
   * new transaction, for writes too large to hold in one.
   */
  commit(): Promise<void>;
  /** Runs `fn` once the transaction commits, before any other write or append starts. */
  afterCommit(fn: () => void): void;
}

/** A read that ran past its time limit; its message reads as DuckDB's interruption does. */
export class PastTimeLimitError extends Error {
  constructor() {
    super('INTERRUPT Error: the statement ran past its time limit');
    this.name = 'PastTimeLimitError';
  }
}

/**
 * One workspace: a DuckDB file opened once with the locked-down configuration, the catalog
 * mirror, a pool of reader connections, a writer whose transactions run one at a time and
 * alone, and appenders whose transactions only insert rows and run side by side. Catalog
 * changes become visible to queries only after their transaction commits.
 */
export class WorkspaceDb {
  readonly #instance: WorkspaceInstance;
  readonly #writer: DuckDBConnection;
  readonly #idle: DuckDBConnection[] = [];
  readonly #waiting: Array<(conn: DuckDBConnection) => void> = [];
  readonly #maxReaders: number;
  readonly #payloadType: string;
  #readers = 0;
  #writeChain: Promise<unknown> = Promise.resolve();
  /** Appender connections not in use, and how many transactions are appending now. */
  readonly #idleAppenders: DuckDBConnection[] = [];
  readonly #appenders: Set<Promise<unknown>> = new Set();
  /** Set while a writer transaction runs (or waits for the appends to end): appends wait. */
  #exclusive: Promise<unknown> | undefined;
  #closed = false;
  #closing = false;
  /** The rollups' rows appended since their last merge, when the workspace keeps them. */
  readonly #ledger: RollupLedger | undefined;
  #merging = false;

  private constructor(
    readonly file: string,
    instance: WorkspaceInstance,
    writer: DuckDBConnection,
    readonly catalog: Catalog,
    payloadType: string,
    maxReaders: number,
    /** The directory SQL may read files from, when opened with one (see the options). */
    readonly stagingDir?: string,
    /** The workspace's rollups, when it keeps them (see the options). */
    ledger: RollupLedger | undefined = undefined,
  ) {
    this.#instance = instance;
    this.#writer = writer;
    this.#maxReaders = maxReaders;
    this.#payloadType = payloadType;
    this.#ledger = ledger;
    for (const entry of catalog.list()) entry.rollup = this.#ledger;
  }

  /** Opens (creating when missing) the database file and loads its catalog. */
  static async open(file: string, options: WorkspaceDbOptions = {}): Promise<WorkspaceDb> {
    const settings = { ...options, checkpointThreshold: options.checkpointThreshold ?? '1GB' };
    const instance = options.stagingDir
      ? await openLoaderInstance(file, options.stagingDir, settings)
      : await openWorkspaceInstance(file, settings);
    try {
      const writer = await instance.connect();
      for (const statement of CATALOG_DDL) await writer.run(statement);
      const catalog = await Catalog.load(writer);
      const rollups = await openRollups(writer, options.rollups, catalog.list());
      if (rollups) rollups.weighRows = options.rollupReads !== 'always';
      return new WorkspaceDb(
        file,
        instance,
        writer,
        catalog,
        await payloadColumnType(writer),
        options.readers ?? 4,
        options.stagingDir,
        rollups,
      );
    } catch (error) {
      instance.closeSync();
      throw error;
    }
  }

  /**
   * Runs `fn` on a reader connection. After `timeoutMs` the running statement is interrupted;
   * the interruption surfaces as DuckDB's "INTERRUPT" error, which callers map to a time-out.
   * DuckDB forgets an interrupt that lands between statements (while one is being prepared),
   * so it is repeated until `fn` settles.
   */
  async read<T>(fn: (conn: DuckDBConnection) => Promise<T>, timeoutMs?: number): Promise<T> {
    const conn = await this.#acquire();
    let repeat: ReturnType<typeof setInterval> | undefined;
    let expired = false;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            expired = true;
            conn.interrupt();
            repeat = setInterval(() => conn.interrupt(), 5);
          }, timeoutMs);
    try {
      const result = await fn(conn);
      // Finished before the interrupt landed but after the limit (a busy process runs the timer
      // late): answered as interrupted all the same, so a limit means one thing under any load.
      if (expired) throw new PastTimeLimitError();
      return result;
    } finally {
      clearTimeout(timer);
      clearInterval(repeat);
      this.#release(conn);
    }
  }

  /**
   * The run stage of a collection-mode query: one statement's rows, read on a reader connection
   * under {@link read}'s time limit, through the connection's prepared statements.
   */
  readRows(statement: Statement, timeoutMs?: number): Promise<PlainValue[][]> {
    return this.read((conn) => readPrepared(conn, statement.sql, statement.params), timeoutMs);
  }

  /**
   * Two statements of one answer, the second rendered from the first's rows by `then` (none
   * where it gives null), read in one transaction on one reader connection, so that both see the
   * same events however many arrive meanwhile.
   */
  readRowsInSnapshot(
    first: Statement,
    then: (rows: PlainValue[][]) => Statement | null,
    timeoutMs?: number,
  ): Promise<[PlainValue[][], PlainValue[][] | null]> {
    return this.read(async (conn) => {
      await conn.run('BEGIN TRANSACTION');
      try {
        const rows = await readPrepared(conn, first.sql, first.params);
        const second = then(rows);
        return [rows, second ? await readPrepared(conn, second.sql, second.params) : null];
      } finally {
        // Read only: nothing to keep, and the connection goes back to the pool out of it.
        await conn.run('ROLLBACK');
      }
    }, timeoutMs);
  }

  /**
   * Runs `fn` in one transaction on the writer connection, after every earlier write. On
   * success the transaction commits (DuckDB syncs its WAL, so the data is durable) and the
   * drafts it touched are published; on failure it rolls back and nothing is published.
   */
  write<T>(fn: (tx: WriteTransaction) => Promise<T>): Promise<T> {
    const run = this.#writeChain.then(async () => {
      // Alone: appends started before finish first, and new ones wait until this commits.
      const alone = (async () => {
        while (this.#appenders.size > 0) await Promise.allSettled([...this.#appenders]);
        return this.#transaction(fn);
      })();
      this.#exclusive = alone;
      try {
        return await alone;
      } finally {
        this.#exclusive = undefined;
      }
    });
    this.#writeChain = run.catch(() => undefined);
    void run.then(
      () => this.#mergeRollupsWhenDue(),
      () => undefined,
    );
    return run;
  }

  /**
   * Queues a writer transaction that merges the rollups' rows once enough were appended since
   * the last merge (`rollups.ts`): readers never wait for it, appends wait as for any write.
   */
  #mergeRollupsWhenDue(): void {
    const ledger = this.#ledger;
    if (!ledger?.due || this.#merging || this.#closing) return;
    this.#merging = true;
    this.write((tx) => coalesceRollups(tx.conn, ledger))
      // A failed merge leaves the rows as they were, each still counted; the next one retries.
      .catch(() => undefined)
      .finally(() => {
        this.#merging = false;
      });
  }

  /**
   * Runs `fn` in one transaction on an appender connection, beside other appends (each commit
   * syncs the WAL, so a resolved append is durable) but never beside {@link write}. `fn` may
   * only insert rows into tables the published catalog already has, with its columns: DuckDB
   * appends from concurrent transactions never conflict, while schema changes would.
   */
  async append<T>(fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    while (this.#exclusive) await this.#exclusive.catch(() => undefined);
    if (this.#closed) throw new Error('workspace database is closed');
    const run = (async () => {
      const conn = this.#idleAppenders.pop() ?? (await this.#instance.connect());
      try {
        await conn.run('BEGIN TRANSACTION');
        try {
          const result = await fn(conn);
          await conn.run('COMMIT');
          return result;
        } catch (error) {
          await conn.run('ROLLBACK').catch(() => undefined);
          throw error;
        }
      } finally {
        this.#idleAppenders.push(conn);
      }
    })();
    this.#appenders.add(run);
    try {
      return await run;
    } finally {
      this.#appenders.delete(run);
      this.#mergeRollupsWhenDue();
    }
  }

  async #transaction<T>(fn: (tx: WriteTransaction) => Promise<T>): Promise<T> {
    if (this.#closed) throw new Error('workspace database is closed');
    const conn = this.#writer;
    const drafts = new Map<string, CollectionEntry>();
    const committed: Array<() => void> = [];
    const tx: WriteTransaction = {
      conn,
      payloadType: this.#payloadType,
      collection: async (name) => {
        let draft = drafts.get(name);
        if (draft) return draft;
        const existing = this.catalog.get(name);
        if (existing) draft = draftOf(existing);
        else {
          const id = this.catalog.reserveId();
          const relations = collectionRelations(id, name);
          draft = {
            id,
            name,
            ...relations,
            segments: [{ table: relations.table, columns: new Set() }],
            keys: [],
            overflow: false,
            rollup: this.#ledger,
          };
          await conn.run(
            `CREATE TABLE ${draft.table} ("timestamp" BIGINT NOT NULL, "json" ${this.#payloadType} NOT NULL)`,
          );
          await conn.run(
            `CREATE VIEW ${draft.view} AS SELECT "timestamp", "json" FROM ${draft.table}`,
          );
          await conn.run(`INSERT INTO ${ENGINE_SCHEMA}.collections VALUES ($1, $2, false)`, [
            id,
            name,
          ]);
        }
        drafts.set(name, draft);
        return draft;
      },
      commit: async () => {
        await conn.run('COMMIT');
        publish();
        await conn.run('BEGIN TRANSACTION');
      },
      afterCommit: (fn) => {
        committed.push(fn);
      },
    };
    const publish = () => {
      for (const draft of drafts.values()) this.catalog.publish(draft);
      drafts.clear();
      for (const fn of committed.splice(0)) fn();
    };
    await conn.run('BEGIN TRANSACTION');
    let result: T;
    try {
      result = await fn(tx);
      await conn.run('COMMIT');
    } catch (error) {
      await conn.run('ROLLBACK').catch(() => undefined);
      throw error;
    }
    publish();
    return result;
  }

  /** What the workspace's rollups are kept by now, when it keeps them. */
  get rollupSpec(): RollupSpec | undefined {
    return this.#ledger?.spec;
  }

  /** The keys and sums the engine added to the rollups by itself, when it keeps them. */
  get addedRollups(): { keys: number; sums: number } {
    return { keys: this.#ledger?.added.keys.size ?? 0, sums: this.#ledger?.added.sums.size ?? 0 };
  }

  /**
   * The distinct values top-level key `name` has across the workspace's events, as rollups
   * count them, read beside other queries.
   */
  keyValueCount(name: string): Promise<number> {
    return this.read((conn) => keyValueCount(conn, this.catalog.list(), name));
  }

  /**
   * Adds keys and sums to the rollups and rebuilds them from the events, in one writer
   * transaction (appends wait for it; queries read the rollups as they were until it commits).
   * Answers the spec now kept.
   */
  async extendRollups(add: RollupUses): Promise<RollupSpec | undefined> {
    const ledger = this.#ledger;
    if (!ledger) return undefined;
    await this.write(async (tx) => {
      const next = await extendRollups(tx.conn, ledger, this.catalog.list(), add);
      tx.afterCommit(() => ledger.adopt(next));
    });
    return ledger.spec;
  }

  /**
   * A fresh connection, for one SQL-mode query or one of the loader's writers (see
   * `LoadWriters`); the caller closes it.
   */
  connect(): Promise<DuckDBConnection> {
    return this.#instance.connect();
  }

  /** The collections with their read-only `timestamp`/`json` views, for SQL mode. */
  async collections(): Promise<Array<{ name: string; relation: string }>> {
    return this.catalog.list().map((c) => ({ name: c.name, relation: c.view }));
  }

  /** Waits for pending writes, then closes every connection and the database. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closing = true;
    // A write may queue a rollup merge as it ends: wait for the chain to stop growing.
    let chain: Promise<unknown>;
    do {
      chain = this.#writeChain;
      await chain;
    } while (chain !== this.#writeChain);
    while (this.#appenders.size > 0) await Promise.allSettled([...this.#appenders]);
    this.#closed = true;
    for (const conn of this.#idleAppenders) conn.closeSync();
    for (const conn of this.#idle) conn.closeSync();
    this.#writer.closeSync();
    this.#instance.closeSync();
  }

  async #acquire(): Promise<DuckDBConnection> {
    if (this.#closed) throw new Error('workspace database is closed');
    const idle = this.#idle.pop();
    if (idle) return idle;
    if (this.#readers < this.#maxReaders) {
      this.#readers++;
      return this.#instance.connect();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #release(conn: DuckDBConnection): void {
    const next = this.#waiting.shift();
    if (next) next(conn);
    else if (this.#closed) conn.closeSync();
    else this.#idle.push(conn);
  }
}
