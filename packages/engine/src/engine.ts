import {
  type CollectionsAnswer,
  type Envelope,
  type ErrorBody,
  isSqlQuery,
  parseQueryRequest,
} from '@analytics-chart/protocol';
import { ApiKeys, authenticate } from './auth/verify-api-key.ts';
import { planCollectionQuery } from './collection/plan/collection-plan.ts';
import { refuseNonFinite } from './collection/plan/number-rule.ts';
import {
  type ClickHouseOptions,
  openClickHouseDriver,
} from './drivers/clickhouse/clickhouse-driver.ts';
import { openDuckDbDriver } from './drivers/duckdb/duckdb-driver.ts';
import type { DriverWorkspace, StorageDriver } from './drivers/storage-driver.ts';
import { EngineError, QUERY_TIMED_OUT } from './engine-error.ts';
import { BodyParsers, defaultBodyWorkers } from './ingest/body-parsers.ts';
import { type IngestKind, parseIngestBody } from './ingest/ingest-body.ts';
import { parseBulkLogRequest, parseLogRequest } from './ingest/ingest-request.ts';
import type { IngestBatch } from './storage/ingest-batch.ts';
import { type RollupReads, type RollupSpec, rollupSpec } from './storage/rollup-spec.ts';
import type { StorageFailure } from './storage/storage-failure.ts';

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
  /**
   * Workspaces (all with `true`) whose DuckDB files keep event counts per 15-minute span at
   * ingest, which Count queries over whole spans read instead of the events, with the same
   * answer; off by default. A record names each workspace's (`*`: every workspace's) rolled-up
   * `keys` (top-level keys that splits and `=`, `≠`, `<`, `>` filters read) and `sums`
   * (metrics whose Sum and Avg they keep); with `auto: true`, the engine adds
   * the keys and metrics that enough of its queries use (see the README's rollups section). A
   * DuckDB workspace opened without them drops them;
   * opened with them again, or with other keys, it rebuilds them from its events. A ClickHouse
   * workspace, which several engines may share, keeps and reads what it has unless the option
   * is `false`.
   */
  rollups?:
    | boolean
    | readonly string[]
    | Readonly<
        Record<string, { keys?: readonly string[]; sums?: readonly string[]; auto?: boolean }>
      >;
  /**
   * How a query that rollups answer chooses between them and its events (the same answer):
   * `'cheaper'` (default) reads rollups only where the planner finds their rows cheaper to read
   * than the events (see the README's rollups section), `'always'` wherever they answer.
   */
  rollupReads?: RollupReads;
  /** Largest request body in bytes for the HTTP app (default 10 MiB). */
  maxBodyBytes?: number;
  /**
   * Threads that decode, parse and check large ingest bodies given as bytes, so that the main
   * thread keeps serving other requests meanwhile (default: all cores but one, at most two; 0
   * parses every body on the main thread).
   */
  bodyWorkers?: number;
  /**
   * Where our own failures (500s) are reported, and what storage could not do without failing a
   * request (`error` then undefined); default `console.error`. Never given a key.
   */
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
  /**
   * The body as JSON text, when it must be sent byte for byte rather than serialized from
   * `body`: Samples, whose payloads keep their stored text (a 20-digit integer keeps its digits).
   */
  json?: string;
}

/** What the ingest endpoints answer: how many events were written. */
export interface IngestAnswer {
  ok: true;
  count: number;
}

/** What `/api/collections` answers (the protocol's definition). */
export type { CollectionsAnswer } from '@analytics-chart/protocol';

/**
 * The Data Query API over a storage driver (embedded DuckDB, or ClickHouse). Every method takes
 * a request body exactly as the HTTP endpoint receives it (`api_key` inside) and returns the
 * status and body the endpoint sends, so in-process callers and the HTTP app share one code path.
 * `log` and `bulkLog` also take the body's raw bytes (a `Uint8Array`, which the HTTP app passes):
 * they answer a body that is not well-formed UTF-8 or not JSON as the HTTP app does, and a large
 * one is parsed in a worker thread, its buffer handed over (detached).
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
  /**
   * Refuses new requests, lets those under way finish and pending writes commit, then closes
   * the storage.
   */
  close(): Promise<void>;
}

const WORKSPACE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const SQL_TIMEOUT_MS = 10_000;
const QUERY_TIMEOUT_MS = 30_000;

/** What the front does for a request, named in its failures' log lines. */
type Operation = 'query' | 'log' | 'bulk-log' | 'collections';

/** A successful answer before it becomes a response. */
interface Success<T> {
  body: T;
  json?: string;
}

/**
 * Checks the options, opens the storage driver (DuckDB, one file per workspace under `dataDir`,
 * unless `clickhouse` is given) and returns the engine in front of it.
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
  const memoryLimit = options.memoryLimit ?? '1GB';
  const logError = options.logError ?? logToStandardError;
  const driver = options.clickhouse
    ? await openClickHouseDriver(options.clickhouse, {
        workspaces: names,
        memoryLimit,
        log: (sentence) => logError(sentence, undefined),
        rollups: clickHouseRollups(names, options.rollups),
        ...(options.rollupReads ? { rollupReads: options.rollupReads } : {}),
        // ClickHouse stops a query at its own limit; the client waits a little longer for that answer.
        requestTimeoutMs:
          Math.max(
            options.queryTimeoutMs ?? QUERY_TIMEOUT_MS,
            options.sqlTimeoutMs ?? SQL_TIMEOUT_MS,
          ) + 5_000,
      })
    : await openDuckDbDriver({
        dataDir: options.dataDir,
        workspaces: names,
        memoryLimit,
        threads: options.threads ?? 2,
        rollups: rollupSpecs(names, options.rollups),
        ...(options.rollupReads ? { rollupReads: options.rollupReads } : {}),
        log: (sentence) => logError(sentence, undefined),
      });
  return new EngineFront({ ...options, logError }, driver);
}

/** Each workspace's rollup spec, for those that keep rollups. */
function rollupSpecs(
  names: readonly string[],
  option: EngineOptions['rollups'],
): Record<string, RollupSpec> {
  const specs: Record<string, RollupSpec> = {};
  for (const name of names) {
    if (option === true || (Array.isArray(option) && option.includes(name))) {
      specs[name] = rollupSpec();
    } else if (typeof option === 'object' && !Array.isArray(option)) {
      const declarations = option as Record<
        string,
        { keys?: readonly string[]; sums?: readonly string[]; auto?: boolean }
      >;
      // No workspace is named `*` (names are letters, digits, `_` and `-`).
      const declared = declarations[name] ?? declarations['*'];
      if (declared) specs[name] = rollupSpec(declared.keys, declared.sums, declared.auto === true);
    }
  }
  return specs;
}

/**
 * What each ClickHouse workspace keeps: its spec where the option names it, nothing for every
 * workspace with `false`, and elsewhere what the database has. Unlike a DuckDB file, a ClickHouse
 * workspace is shared by every replica of the engine, so one started without the option must
 * not drop the rollups the others keep.
 */
function clickHouseRollups(
  names: readonly string[],
  option: EngineOptions['rollups'],
): Record<string, RollupSpec | false> {
  if (option === false) return Object.fromEntries(names.map((name) => [name, false]));
  return rollupSpecs(names, option);
}

/** The default `logError`: standard error, with the failure where there is one. */
function logToStandardError(message: string, error: unknown): void {
  if (error === undefined) console.error(`analytics-engine: ${message}`);
  else console.error(`analytics-engine: ${message}`, error);
}

/**
 * The engine front, the same over every storage driver: authenticates each request, parses it,
 * plans a collection-mode query or hands a SQL-mode one over, submits ingest, and maps every
 * outcome to a status and a JSON body.
 */
class EngineFront implements Engine {
  readonly maxBodyBytes: number;
  readonly #keys: ApiKeys;
  readonly #driver: StorageDriver;
  readonly #now: () => number;
  readonly #sqlTimeoutMs: number;
  readonly #queryTimeoutMs: number;
  readonly #logError: (message: string, error: unknown) => void;
  readonly #bodies: BodyParsers;
  /** Requests under way, which `close` lets finish before the storage closes. */
  readonly #pending = new Set<Promise<unknown>>();
  #closing: Promise<void> | undefined;

  constructor(options: EngineOptions, driver: StorageDriver) {
    this.#keys = new ApiKeys(options.workspaces);
    this.#driver = driver;
    this.#now = options.now ?? (() => Date.now() / 1000);
    this.#sqlTimeoutMs = options.sqlTimeoutMs ?? SQL_TIMEOUT_MS;
    this.#queryTimeoutMs = options.queryTimeoutMs ?? QUERY_TIMEOUT_MS;
    this.maxBodyBytes = options.maxBodyBytes ?? 10 * 1024 * 1024;
    this.#bodies = new BodyParsers(options.bodyWorkers ?? defaultBodyWorkers());
    this.#bodies.start();
    this.#logError = options.logError ?? logToStandardError;
  }

  query(body: unknown) {
    return this.#answer('query', body, async (workspace, request): Promise<Success<Envelope>> => {
      const parsed = parseQueryRequest(request);
      if (!parsed.ok) throw new EngineError(400, parsed.error);
      const query = parsed.value;
      const now = this.#now();
      if (isSqlQuery(query)) {
        return {
          body: await workspace.querySql(query, { now, timeoutMs: this.#sqlTimeoutMs }),
        };
      }
      const plan = planCollectionQuery(query, now);
      const answer = await workspace.queryCollection(plan, {
        now,
        timeoutMs: this.#queryTimeoutMs,
      });
      refuseNonFinite(answer.envelope);
      return { body: answer.envelope, json: answer.json };
    });
  }

  log(body: unknown) {
    if (body instanceof Uint8Array) return this.#ingestBytes('log', body);
    return this.#answer('log', body, (workspace, request) =>
      this.#ingest(workspace, parseLogRequest(request, this.#now())),
    );
  }

  bulkLog(body: unknown) {
    if (body instanceof Uint8Array) return this.#ingestBytes('bulk-log', body);
    return this.#answer('bulk-log', body, (workspace, request) =>
      this.#ingest(workspace, parseBulkLogRequest(request, this.#now())),
    );
  }

  collections(body: unknown) {
    return this.#answer('collections', body, async (workspace) => {
      const names = await workspace.collectionNames();
      return { body: { list: names.map((name) => ({ name })) } };
    });
  }

  logError(message: string, error: unknown): void {
    this.#logError(message, error);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.allSettled([...this.#pending]);
      await this.#bodies.close();
      await this.#driver.close();
    })();
    return this.#closing;
  }

  async #ingest(workspace: DriverWorkspace, batch: IngestBatch): Promise<Success<IngestAnswer>> {
    await workspace.ingest(batch);
    return { body: { ok: true, count: batch.records.length } };
  }

  /**
   * An ingest body as bytes: decoded, parsed and checked (in a body worker when it is large),
   * then answered in the same order as an object body after the HTTP app's own checks: not
   * UTF-8 or not JSON first, then the key, then the events.
   */
  #ingestBytes(what: IngestKind, bytes: Uint8Array): Promise<EngineResponse<IngestAnswer>> {
    return this.#track(
      (async (): Promise<EngineResponse<IngestAnswer>> => {
        let parsed: Awaited<ReturnType<BodyParsers['parse']>>;
        try {
          // Once closing, the workers may stop before this request ends: it is parsed here.
          parsed = this.#closing
            ? parseIngestBody(what, bytes, this.#now())
            : await this.#bodies.parse(what, bytes, this.#now());
        } catch (error) {
          return this.#failure(what, error);
        }
        if ('refused' in parsed) return { status: 400, body: { error: parsed.refused } };
        return this.#respond(what, parsed.auth, (workspace) => {
          if ('invalid' in parsed) throw new EngineError(400, parsed.invalid);
          return this.#ingest(workspace, parsed.batch);
        });
      })(),
    );
  }

  /** Authenticates, runs `handle`, and maps its outcome; `close` waits for the request. */
  async #answer<T>(
    what: Operation,
    body: unknown,
    handle: (workspace: DriverWorkspace, request: Record<string, unknown>) => Promise<Success<T>>,
  ): Promise<EngineResponse<T>> {
    return this.#track(this.#respond(what, body, handle));
  }

  /** `work`, which `close` waits for. */
  async #track<T>(work: Promise<T>): Promise<T> {
    this.#pending.add(work);
    try {
      return await work;
    } finally {
      this.#pending.delete(work);
    }
  }

  async #respond<T>(
    what: Operation,
    body: unknown,
    handle: (workspace: DriverWorkspace, request: Record<string, unknown>) => Promise<Success<T>>,
  ): Promise<EngineResponse<T>> {
    try {
      if (this.#closing) throw new EngineError(503, 'the engine is shutting down');
      const { workspace, request } = authenticate(this.#keys, this.#driver.workspaces, body);
      const success = await handle(workspace, request);
      return success.json === undefined
        ? { status: 200, body: success.body }
        : { status: 200, body: success.body, json: success.json };
    } catch (error) {
      return this.#failure(what, error);
    }
  }

  /**
   * An EngineError becomes its status and sentence, a failure the storage describes the
   * engine's answer to it, anything else a logged 500 that says nothing about the cause.
   */
  #failure(what: Operation, error: unknown): EngineResponse<never> {
    if (error instanceof EngineError) {
      return { status: error.status, body: { error: error.message } };
    }
    const failure = this.#driver.describeFailure(error);
    if (failure === 'unavailable') this.#logError(`${what} failed`, error);
    if (failure) {
      const { status, message } = FAILURE_ANSWERS[failure](what);
      return { status, body: { error: message } };
    }
    this.#logError(`${what} failed`, error);
    return { status: 500, body: { error: 'internal error' } };
  }
}

/** The engine's answer to each storage failure, the same on every driver. */
const FAILURE_ANSWERS: Record<
  StorageFailure,
  (what: Operation) => { status: number; message: string }
> = {
  'timed-out': () => ({ status: 504, message: QUERY_TIMED_OUT }),
  'out-of-memory': (what) =>
    what === 'query'
      ? { status: 503, message: "the query needs more memory than the engine's limit" }
      : {
          status: 413,
          message: "the events need more memory than the engine's limit; send fewer at a time",
        },
  unavailable: () => ({ status: 503, message: 'the storage is unavailable; try again' }),
};
