import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { SqlQuery } from '@analytics-chart/protocol';
import { collectionQuery } from '../../collection/duckdb/run-collection-query.ts';
import { WriteQueue } from '../../ingest/write-queue.ts';
import { runSqlQuery } from '../../sql-mode/duckdb/index.ts';
import { WorkspaceDb } from '../../storage/duckdb/workspace-db.ts';
import type { IngestBatch } from '../../storage/ingest-batch.ts';
import type { RollupReads, RollupSpec } from '../../storage/rollup-spec.ts';
import type { StorageFailure } from '../../storage/storage-failure.ts';
import { AutoRollups } from '../auto-rollups.ts';
import type { DriverWorkspace, QueryLimits, StorageDriver } from '../storage-driver.ts';

/** Where and how the DuckDB driver opens its workspaces. */
export interface DuckDbDriverOptions {
  /** Directory holding one `<workspace>.duckdb` file per workspace (created when missing). */
  dataDir: string;
  /** The workspaces' names (file names). */
  workspaces: string[];
  /** DuckDB memory limit per workspace. */
  memoryLimit: string;
  /** DuckDB threads per workspace. */
  threads: number;
  /** The workspaces that keep rollups (`storage/duckdb/rollups.ts`), with what they keep them by. */
  rollups?: Readonly<Record<string, RollupSpec>>;
  /** Whether queries weigh the rollups' rows against the events (default `'cheaper'`). */
  rollupReads?: RollupReads;
  /** Where the keys the engine adds to rollups by itself, and failures to, are reported. */
  log?: (sentence: string) => void;
}

/** Opens one DuckDB file per workspace: the embedded, default storage. */
export async function openDuckDbDriver(options: DuckDbDriverOptions): Promise<StorageDriver> {
  await mkdir(options.dataDir, { recursive: true });
  const workspaces = new Map<string, DuckDbWorkspace>();
  try {
    for (const name of options.workspaces) {
      const db = await WorkspaceDb.open(join(options.dataDir, `${name}.duckdb`), {
        memoryLimit: options.memoryLimit,
        threads: options.threads,
        rollups: options.rollups?.[name] ?? false,
        ...(options.rollupReads ? { rollupReads: options.rollupReads } : {}),
      });
      const auto = options.rollups?.[name]?.auto === true;
      workspaces.set(name, new DuckDbWorkspace(db, auto ? { name, log: options.log } : undefined));
    }
  } catch (error) {
    for (const w of workspaces.values()) await w.db.close();
    throw error;
  }
  return new DuckDbDriver(workspaces);
}

class DuckDbWorkspace implements DriverWorkspace {
  readonly db: WorkspaceDb;
  /** Batches commit one transaction at a time, in order. */
  readonly writes: WriteQueue;

  /** The collection folder's own function, called by the front without a step through here. */
  readonly queryCollection: DriverWorkspace['queryCollection'];

  /** With automatic rollup keys: what the workspace's queries used, and the addition under way. */
  readonly #auto: AutoRollups | undefined;

  constructor(
    db: WorkspaceDb,
    auto?: { name: string; log?: ((sentence: string) => void) | undefined },
  ) {
    this.db = db;
    this.writes = new WriteQueue(db);
    const run = collectionQuery(db);
    if (!auto) {
      this.queryCollection = run;
      return;
    }
    const rollups = new AutoRollups(
      auto.name,
      {
        spec: () => db.rollupSpec,
        added: () => db.addedRollups,
        keyValueCount: (name) => db.keyValueCount(name),
        extend: (add) => db.extendRollups(add),
      },
      auto.log,
    );
    this.#auto = rollups;
    this.queryCollection = (plan, limits) => {
      rollups.observe(plan);
      return run(plan, limits);
    };
  }

  /** Waits for an addition to the rollups under way. */
  async idle(): Promise<void> {
    await this.#auto?.idle();
  }

  querySql(query: SqlQuery, limits: QueryLimits) {
    return runSqlQuery(this.db, query, { timeoutMs: limits.timeoutMs, now: limits.now });
  }

  ingest(batch: IngestBatch): Promise<void> {
    return this.writes.submit(batch);
  }

  async collectionNames(): Promise<string[]> {
    return this.db.catalog.list().map((c) => c.name);
  }
}

class DuckDbDriver implements StorageDriver {
  readonly workspaces: ReadonlyMap<string, DuckDbWorkspace>;

  constructor(workspaces: ReadonlyMap<string, DuckDbWorkspace>) {
    this.workspaces = workspaces;
  }

  /** DuckDB interrupts a statement at its time limit and refuses work past its memory limit. */
  describeFailure(error: unknown): StorageFailure | undefined {
    if (!(error instanceof Error)) return undefined;
    if (/INTERRUPT/i.test(error.message)) return 'timed-out';
    if (/Out of Memory/i.test(error.message)) return 'out-of-memory';
    return undefined;
  }

  async close(): Promise<void> {
    for (const w of this.workspaces.values()) {
      await w.idle();
      await w.writes.idle();
      await w.db.close();
    }
  }
}
