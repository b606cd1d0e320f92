import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Envelope,
  type ErrorBody,
  isSqlQuery,
  parseQueryRequest,
} from '@analytics-chart/protocol';
import { ApiKeys, authenticate } from './auth/verify-api-key.ts';
import { EngineError } from './engine-error.ts';
import { type IngestBatch, parseBulkLogRequest, parseLogRequest } from './ingest/ingest-request.ts';
import { WriteQueue } from './ingest/write-queue.ts';
import { runCollectionQuery } from './collection/duckdb/run-collection-query.ts';
import { QUERY_TIMED_OUT, runSqlQuery } from './sql-mode/duckdb/index.ts';
import {
  type ClickHouseOptions,
  createClickHouseEngine,
} from './drivers/clickhouse/clickhouse-driver.ts';
import { WorkspaceDb } from './storage/duckdb/workspace-db.ts';

/** How an engine is set up. */
export interface EngineOptions {
  /** Directory holding one `<workspace>.duckdb` file per workspace (created when missing). */
  dataDir: string;
  /** Workspace name → API key. Names are file names: letters, digits, `_` and `-`. */
  workspaces: Record<string, string>;
  /** The current time in Unix seconds (tests pin it); default: the system clock. */
  now?: () => number;
  /** Time limit of a SQL-mode query in ms (default 10 000). */
  sqlTimeoutMs?: number;
  /** Time limit of a collection-mode query in ms (default 30 000). */
  queryTimeoutMs?: number;
  /** DuckDB memory limit per workspace (default `'1GB'`). */
  memoryLimit?: string;
  /** DuckDB threads per workspace (default 2). */
  threads?: number;
  /** Largest request body in bytes for the HTTP app (default 10 MiB). */
  maxBodyBytes?: number;
  /** Where our own failures (500s) are reported; default `console.error`. Never given a key. */
  logError?: (message: string, error: unknown) => void;
  /**
   * Keep the workspaces in ClickHouse instead of DuckDB files (`dataDir` is then unused): see
   * the README's ClickHouse section for what runs there yet.
   */
  clickhouse?: ClickHouseOptions;
}

/** An answer of the engine: the HTTP status and the JSON body. */
export interface EngineResponse<T = Envelope> {
  status: number;
  body: T | ErrorBody;
}

/** What the ingest endpoints answer: how many events were written. */
export interface IngestAnswer {
  ok: true;
  count: number;
}

/** What `/api/collections` answers. */
export interface CollectionsAnswer {
  list: Array<{ name: string }>;
}

/**
 * The Data Query API over a storage driver (embedded DuckDB, or ClickHouse). Every method takes
 * a request body exactly as the HTTP endpoint receives it (`api_key` inside) and returns the
 * status and body the endpoint sends, so in-process callers and the HTTP app share one code path.
 */
export interface Engine {
  /** `POST /api/visualize/data`. */
  query(body: unknown): Promise<EngineResponse<Envelope>>;
  /** `POST /api/log`. */
  log(body: unknown): Promise<EngineResponse<IngestAnswer>>;
  /** `POST /api/bulk-log`. */
  bulkLog(body: unknown): Promise<EngineResponse<IngestAnswer>>;
  /** `POST /api/collections`. */
  collections(body: unknown): Promise<EngineResponse<CollectionsAnswer>>;
  /** The largest request body the HTTP app accepts. */
  readonly maxBodyBytes: number;
  /** Reports an unexpected failure (used by the HTTP app for its own errors). */
  logError(message: string, error: unknown): void;
  /** Waits for pending writes, then closes every workspace database. */
  close(): Promise<void>;
}

const WORKSPACE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

interface Workspace {
  db: WorkspaceDb;
  writes: WriteQueue;
}

/**
 * Opens every workspace and returns the engine: the storage driver is DuckDB (one file per
 * workspace under `dataDir`) unless `clickhouse` is given.
 */
export async function createEngine(options: EngineOptions): Promise<Engine> {
  const names = Object.keys(options.workspaces);
  if (names.length === 0) throw new Error('createEngine: at least one workspace is needed');
  for (const [name, key] of Object.entries(options.workspaces)) {
    if (!WORKSPACE_NAME.test(name)) {
      throw new Error(`createEngine: workspace name '${name}' must match ${WORKSPACE_NAME}`);
    }
    if (typeof key !== 'string' || key.length === 0) {
      throw new Error(`createEngine: workspace '${name}' needs a non-empty API key`);
    }
  }
  if (options.clickhouse) return createClickHouseEngine(options, options.clickhouse);
  await mkdir(options.dataDir, { recursive: true });
  const workspaces = new Map<string, Workspace>();
  try {
    for (const name of names) {
      const db = await WorkspaceDb.open(join(options.dataDir, `${name}.duckdb`), {
        memoryLimit: options.memoryLimit ?? '1GB',
        threads: options.threads ?? 2,
      });
      workspaces.set(name, { db, writes: new WriteQueue(db) });
    }
  } catch (error) {
    for (const w of workspaces.values()) await w.db.close();
    throw error;
  }
  return new DuckDbEngine(options, workspaces);
}

class DuckDbEngine implements Engine {
  readonly maxBodyBytes: number;
  readonly #keys: ApiKeys;
  readonly #workspaces: Map<string, Workspace>;
  readonly #now: () => number;
  readonly #sqlTimeoutMs: number;
  readonly #queryTimeoutMs: number;
  readonly #logError: (message: string, error: unknown) => void;
  #closing: Promise<void> | undefined;

  constructor(options: EngineOptions, workspaces: Map<string, Workspace>) {
    this.#keys = new ApiKeys(options.workspaces);
    this.#workspaces = workspaces;
    this.#now = options.now ?? (() => Date.now() / 1000);
    this.#sqlTimeoutMs = options.sqlTimeoutMs ?? 10_000;
    this.#queryTimeoutMs = options.queryTimeoutMs ?? 30_000;
    this.maxBodyBytes = options.maxBodyBytes ?? 10 * 1024 * 1024;
    this.#logError =
      options.logError ??
      ((message, error) => console.error(`analytics-engine: ${message}`, error));
  }

  query(body: unknown) {
    return this.#answer('query', body, async (workspace, request) => {
      const parsed = parseQueryRequest(request);
      if (!parsed.ok) throw new EngineError(400, parsed.error);
      const query = parsed.value;
      if (isSqlQuery(query)) {
        return runSqlQuery(workspace.db, query, {
          timeoutMs: this.#sqlTimeoutMs,
          now: this.#now(),
        });
      }
      return runCollectionQuery(workspace.db, query, this.#now(), this.#queryTimeoutMs);
    });
  }

  log(body: unknown) {
    return this.#answer('log', body, (workspace, request) =>
      this.#ingest(workspace, parseLogRequest(request, this.#now())),
    );
  }

  bulkLog(body: unknown) {
    return this.#answer('bulk-log', body, (workspace, request) =>
      this.#ingest(workspace, parseBulkLogRequest(request, this.#now())),
    );
  }

  collections(body: unknown) {
    return this.#answer('collections', body, async (workspace) => ({
      list: workspace.db.catalog.list().map((c) => ({ name: c.name })),
    }));
  }

  logError(message: string, error: unknown): void {
    this.#logError(message, error);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      for (const w of this.#workspaces.values()) {
        await w.writes.idle();
        await w.db.close();
      }
    })();
    return this.#closing;
  }

  async #ingest(workspace: Workspace, batch: IngestBatch): Promise<IngestAnswer> {
    await workspace.writes.submit(batch);
    return { ok: true, count: batch.records.length };
  }

  /**
   * Authenticates, runs `handle`, and maps every outcome to a status and a JSON body: an
   * EngineError to its status and sentence, a DuckDB interruption to 504, anything else to a
   * logged 500 that says nothing about the cause.
   */
  async #answer<T>(
    what: string,
    body: unknown,
    handle: (workspace: Workspace, request: Record<string, unknown>) => Promise<T>,
  ): Promise<EngineResponse<T>> {
    try {
      if (this.#closing) throw new EngineError(503, 'the engine is shutting down');
      const { workspace, request } = authenticate(this.#keys, this.#workspaces, body);
      return { status: 200, body: await handle(workspace, request) };
    } catch (error) {
      return this.#failure(what, error);
    }
  }

  #failure(what: string, error: unknown): EngineResponse<never> {
    if (error instanceof EngineError)
      return { status: error.status, body: { error: error.message } };
    if (error instanceof Error && /INTERRUPT/i.test(error.message)) {
      return { status: 504, body: { error: QUERY_TIMED_OUT } };
    }
    if (error instanceof Error && /Out of Memory/i.test(error.message)) {
      return what === 'query'
        ? { status: 503, body: { error: "the query needs more memory than the engine's limit" } }
        : {
            status: 413,
            body: {
              error: "the events need more memory than the engine's limit; send fewer at a time",
            },
          };
    }
    this.#logError(`${what} failed`, error);
    return { status: 500, body: { error: 'internal error' } };
  }
}
