import { isSqlQuery, parseQueryRequest } from '@analytics-chart/protocol';
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { ApiKeys, authenticate } from '../../auth/verify-api-key.ts';
import type {
  CollectionsAnswer,
  Engine,
  EngineOptions,
  EngineResponse,
  IngestAnswer,
} from '../../engine.ts';
import { EngineError } from '../../engine-error.ts';
import {
  type IngestBatch,
  parseBulkLogRequest,
  parseLogRequest,
} from '../../ingest/ingest-request.ts';
import { runClickHouseCollectionQuery } from './clickhouse-collection-query.ts';
import { registerCollection } from './clickhouse-collections.ts';
import { isConnectionError, limitError, STORAGE_UNAVAILABLE } from './clickhouse-errors.ts';
import { insertBatch } from './clickhouse-ingest.ts';
import {
  COLLECTIONS_TABLE,
  quoteClickHouseIdentifier,
  RESERVED_NAMES,
  workspaceDatabase,
  workspaceSchema,
} from './clickhouse-schema.ts';
import { runClickHouseSql } from './clickhouse-sql-mode.ts';

/** Where a ClickHouse-backed engine keeps its workspaces. */
export interface ClickHouseOptions {
  /** The HTTP(S) interface, e.g. `https://host:8443`, without credentials. */
  url: string;
  /** ClickHouse user (default `default`). */
  username?: string;
  /** That user's password (default empty). */
  password?: string;
  /** Workspace `w` lives in database `<prefix>w` (default `analytics_`). */
  databasePrefix?: string;
}

/** Collections each workspace remembers as registered; past it, the memory starts over. */
const KNOWN_COLLECTIONS = 10_000;

interface ClickHouseWorkspace {
  database: string;
  client: ClickHouseClient;
  /** Collections known to be in the catalog, so ingest registers each one once per process. */
  known: Set<string>;
}

/**
 * Creates the workspaces' databases (idempotent, so any number of engines may start against the
 * same ClickHouse) and returns an engine that keeps no state of its own: events, the collection
 * catalog and SQL-mode views all live in ClickHouse.
 */
export async function createClickHouseEngine(
  options: EngineOptions,
  clickhouse: ClickHouseOptions,
): Promise<Engine> {
  const connect = (database?: string) =>
    createClient({
      url: clickhouse.url,
      username: clickhouse.username ?? 'default',
      password: clickhouse.password ?? '',
      ...(database ? { database } : {}),
      // The client's own log prints queries and their parameters; failures reach logError.
      log: { level: ClickHouseLogLevel.OFF },
      request_timeout:
        Math.max(options.queryTimeoutMs ?? 30_000, options.sqlTimeoutMs ?? 10_000) + 5_000,
    });
  const workspaces = new Map<string, ClickHouseWorkspace>();
  const setup = connect();
  try {
    for (const name of Object.keys(options.workspaces)) {
      const database = workspaceDatabase(clickhouse.databasePrefix ?? 'analytics_', name);
      for (const statement of workspaceSchema(database)) await setup.command({ query: statement });
      // A client per workspace, so that SQL mode's unqualified names resolve in its database.
      workspaces.set(name, { database, client: connect(database), known: new Set() });
    }
  } catch (error) {
    for (const w of workspaces.values()) await w.client.close();
    throw error;
  } finally {
    await setup.close();
  }
  return new ClickHouseEngine(options, workspaces);
}

class ClickHouseEngine implements Engine {
  readonly maxBodyBytes: number;
  readonly #keys: ApiKeys;
  readonly #workspaces: Map<string, ClickHouseWorkspace>;
  readonly #now: () => number;
  readonly #sqlTimeoutMs: number;
  readonly #queryTimeoutMs: number;
  readonly #memoryLimit: string;
  readonly #logError: (message: string, error: unknown) => void;
  readonly #pending = new Set<Promise<unknown>>();
  #closing: Promise<void> | undefined;

  constructor(options: EngineOptions, workspaces: Map<string, ClickHouseWorkspace>) {
    this.#keys = new ApiKeys(options.workspaces);
    this.#workspaces = workspaces;
    this.#now = options.now ?? (() => Date.now() / 1000);
    this.#sqlTimeoutMs = options.sqlTimeoutMs ?? 10_000;
    this.#queryTimeoutMs = options.queryTimeoutMs ?? 30_000;
    this.#memoryLimit = options.memoryLimit ?? '1GB';
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
      const run = {
        client: workspace.client,
        database: workspace.database,
        now: this.#now(),
        memoryLimit: this.#memoryLimit,
      };
      if (isSqlQuery(query)) {
        return runClickHouseSql(query, { ...run, timeoutMs: this.#sqlTimeoutMs });
      }
      return runClickHouseCollectionQuery(query, { ...run, timeoutMs: this.#queryTimeoutMs });
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
    return this.#answer('collections', body, async (workspace): Promise<CollectionsAnswer> => {
      const result = await workspace.client.query({
        query: `SELECT name FROM ${quoteClickHouseIdentifier(workspace.database)}.${quoteClickHouseIdentifier(COLLECTIONS_TABLE)} GROUP BY name ORDER BY name`,
        format: 'JSONEachRow',
      });
      const rows = await result.json<{ name: string }>();
      return { list: rows.map((r) => ({ name: r.name })) };
    });
  }

  logError(message: string, error: unknown): void {
    this.#logError(message, error);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.allSettled([...this.#pending]);
      for (const w of this.#workspaces.values()) await w.client.close();
    })();
    return this.#closing;
  }

  async #ingest(workspace: ClickHouseWorkspace, batch: IngestBatch): Promise<IngestAnswer> {
    if (RESERVED_NAMES.has(batch.collection)) {
      throw new EngineError(400, `collection name '${batch.collection}' is reserved`);
    }
    await this.#register(workspace, batch.collection);
    await insertBatch(workspace.client, workspace.database, batch, isConnectionError);
    return { ok: true, count: batch.records.length };
  }

  /** Records a collection in the catalog and gives it its SQL-mode view (both idempotent). */
  async #register(workspace: ClickHouseWorkspace, collection: string): Promise<void> {
    if (workspace.known.has(collection)) return;
    await registerCollection(workspace.client, workspace.database, collection);
    if (workspace.known.size >= KNOWN_COLLECTIONS) workspace.known.clear();
    workspace.known.add(collection);
  }

  /**
   * Authenticates, runs `handle`, and maps every outcome to a status and a JSON body: an
   * EngineError to its status and sentence, ClickHouse's own limits to the engine's answers, an
   * unreachable ClickHouse to 503, anything else to a logged 500 that says nothing about it.
   */
  async #answer<T>(
    what: string,
    body: unknown,
    handle: (workspace: ClickHouseWorkspace, request: Record<string, unknown>) => Promise<T>,
  ): Promise<EngineResponse<T>> {
    const work = (async (): Promise<EngineResponse<T>> => {
      try {
        if (this.#closing) throw new EngineError(503, 'the engine is shutting down');
        const { workspace, request } = authenticate(this.#keys, this.#workspaces, body);
        return { status: 200, body: await handle(workspace, request) };
      } catch (error) {
        if (error instanceof EngineError) {
          return { status: error.status, body: { error: error.message } };
        }
        const limit = limitError(error, what);
        if (limit) return { status: limit.status, body: { error: limit.message } };
        this.#logError(`${what} failed`, error);
        if (isConnectionError(error)) return { status: 503, body: { error: STORAGE_UNAVAILABLE } };
        return { status: 500, body: { error: 'internal error' } };
      }
    })();
    this.#pending.add(work);
    try {
      return await work;
    } finally {
      this.#pending.delete(work);
    }
  }
}
