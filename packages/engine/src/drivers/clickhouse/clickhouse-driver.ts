import { randomUUID } from 'node:crypto';
import type { CollectionQuery, SqlQuery } from '@analytics-chart/protocol';
import type { ClickHouseClient } from '@clickhouse/client-web';
import { runClickHouseCollectionQuery } from '../../collection/clickhouse/clickhouse-collection-query.ts';
import type { CollectionPlan } from '../../collection/plan/collection-plan.ts';
import { EngineError } from '../../engine-error.ts';
import { GroupCommit } from '../../ingest/group-commit.ts';
import { runClickHouseSql } from '../../sql-mode/clickhouse/clickhouse-sql-mode.ts';
import { registerCollection } from '../../storage/clickhouse/clickhouse-collections.ts';
import { isConnectionError, limitFailure } from '../../storage/clickhouse/clickhouse-errors.ts';
import {
  insertRendered,
  insertTsv,
  type RenderedBatch,
  renderBatch,
} from '../../storage/clickhouse/clickhouse-ingest.ts';
import {
  KeyColumns,
  type KeyColumnsOptions,
  sortProjectionName,
} from '../../storage/clickhouse/clickhouse-key-columns.ts';
import {
  extendClickHouseRollups,
  keyValueCount,
} from '../../storage/clickhouse/clickhouse-rollup-addition.ts';
import { openClickHouseRollups } from '../../storage/clickhouse/clickhouse-rollup-open.ts';
import type { ClickHouseRollups } from '../../storage/clickhouse/clickhouse-rollups.ts';
import type { ClickHouseRun } from '../../storage/clickhouse/clickhouse-run.ts';
import {
  COLLECTIONS_TABLE,
  quoteClickHouseIdentifier,
  RESERVED_NAMES,
  workspaceDatabase,
  workspaceSchema,
} from '../../storage/clickhouse/clickhouse-schema.ts';
import { checkClickHouseVersion } from '../../storage/clickhouse/clickhouse-version.ts';
import type { IngestBatch } from '../../storage/ingest-batch.ts';
import type { RollupReads, RollupSpec } from '../../storage/rollup-spec.ts';
import type { SeenKey } from '../../storage/seen-key.ts';
import type { StorageFailure } from '../../storage/storage-failure.ts';
import { AutoRollups } from '../auto-rollups.ts';
import type { DriverWorkspace, QueryLimits, StorageDriver } from '../storage-driver.ts';
import { connectClickHouse } from './clickhouse-connection.ts';
import { STARTUP_WAIT_MS, untilReachable } from './wait-for-clickhouse.ts';

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
  /**
   * A top-level payload key (e.g. `event`) that filters often name: the event table gets a
   * projection of its form columns sorted by that key's string form, so such filters read
   * only their range (see the README's *Storage model*). Engines without it find the
   * projection in the table and use it too.
   */
  sortField?: string;
  /**
   * The top-level payload keys (e.g. `['event', 'plan', 'price']`) whose values get typed
   * columns, with the paths under them; queries read every other key from the JSON payload,
   * with the same answers, more slowly. Fewer columns make inserts, loads and each query's
   * planning cheaper. The sort field and the keys and sums of rollups always get theirs, and
   * columns a table already has stay. Default: every key, up to 64 paths.
   */
  keyColumns?: readonly string[];
  /**
   * How long opening waits for a ClickHouse it cannot reach yet (refused, unreachable, no
   * answer), trying again, before it fails with a sentence naming the URL (default 30 s; 0
   * tries once).
   */
  startupWaitMs?: number;
}

/** What the engine front sets for the ClickHouse driver. */
export interface ClickHouseDriverOptions {
  /** The workspaces' names. */
  workspaces: string[];
  /** DuckDB-style size (`'1GB'`), applied as `max_memory_usage`. */
  memoryLimit: string;
  /** How long the client waits for ClickHouse's answer, beyond any query's own limit. */
  requestTimeoutMs: number;
  /** Where what the driver could not do without failing a request is told (a sentence, no SQL). */
  log?: (sentence: string) => void;
  /**
   * Per workspace, the rollups it keeps (`storage/clickhouse/clickhouse-rollups.ts`): a spec,
   * `true` for the ones it has (else counts alone), or false to drop them; a workspace not named
   * keeps what its database has (the loader, the export).
   */
  rollups?: Readonly<Record<string, RollupSpec | boolean>>;
  /** Whether queries weigh the rollups' rows against the events (default `'cheaper'`). */
  rollupReads?: RollupReads;
}

/** Collections each workspace remembers as registered; past it, the memory starts over. */
const KNOWN_COLLECTIONS = 10_000;
/**
 * How long the client building rollups waits for a statement: a backfill reads every event of
 * the workspace, and one cut off by the client leaves a table without rows to build again. The
 * build lock is renewed meanwhile, so this bounds only a ClickHouse that stopped answering.
 */
const ROLLUP_BUILD_TIMEOUT_MS = 60 * 60_000;

/**
 * Creates the workspaces' databases (idempotent, so any number of engines may start against the
 * same ClickHouse) and returns a driver that keeps no state of its own: events, the collection
 * catalog and SQL-mode views all live in ClickHouse.
 */
export async function openClickHouseDriver(
  clickhouse: ClickHouseOptions,
  options: ClickHouseDriverOptions,
): Promise<ClickHouseStorageDriver> {
  const connect = (database?: string, requestTimeoutMs = options.requestTimeoutMs) =>
    connectClickHouse(clickhouse, { database, requestTimeoutMs });
  const workspaces = new Map<string, ClickHouseWorkspace>();
  const setup = connect();
  try {
    await untilReachable(
      clickhouse.url,
      clickhouse.startupWaitMs ?? STARTUP_WAIT_MS,
      () => checkClickHouseVersion(setup),
      options.log,
    );
    for (const name of options.workspaces) {
      const database = workspaceDatabase(clickhouse.databasePrefix ?? 'analytics_', name);
      for (const statement of workspaceSchema(database)) await setup.command({ query: statement });
      // A client per workspace, so that SQL mode's unqualified names resolve in its database.
      const workspace = new ClickHouseWorkspace(
        database,
        { client: connect(database), builds: connect(database, ROLLUP_BUILD_TIMEOUT_MS) },
        options.memoryLimit,
        { sortField: clickhouse.sortField, keys: clickhouse.keyColumns, log: options.log },
      );
      workspaces.set(name, workspace);
      await workspace.columns.open();
      const rollups = options.rollups?.[name];
      if (typeof rollups === 'object') {
        // The view reads the declared keys' form columns, which the insert's block holds.
        workspace.columns.allow([...rollups.keys, ...rollups.sums]);
        await workspace.columns.ensure(
          [...rollups.keys, ...rollups.sums].map((key) => ({
            path: [key],
            kinds: new Set(['string' as const]),
          })),
        );
      }
      workspace.rollups = await openClickHouseRollups(
        workspace.client,
        database,
        rollups,
        workspace.columns.lookup(),
        workspace.builds,
      );
      if (workspace.rollups) workspace.rollups.weighRows = options.rollupReads !== 'always';
      if (typeof rollups === 'object' && rollups.auto) workspace.addKeys(name, options.log);
    }
  } catch (error) {
    for (const w of workspaces.values()) await w.close();
    throw error;
  } finally {
    await setup.close();
  }
  return new ClickHouseDriver(workspaces);
}

/** Attempts of one load insert when the connection fails (each with the same token). */
const LOAD_ATTEMPTS = 3;

/** Events per insert at most. */
const MAX_INSERT_EVENTS = 50_000;

/**
 * Events an insert waits to gather while writers are concurrent: each insert writes a part,
 * and ClickHouse's work per part (writing it, then merging it) costs more than the rows of a
 * 1,000-event request, while per event an insert of this many costs about what a larger one does.
 */
const GATHER_EVENTS = 16_000;
/**
 * How long after the previous insert the next one waits for them, at most (ClickHouse's own
 * asynchronous inserts wait 50 to 200 ms to gather theirs).
 */
const GATHER_MS = 50;

/** A ClickHouse workspace as the loader sees it: beside ingest, inserts of prepared text. */
export interface ClickHouseLoadTarget extends DriverWorkspace {
  /**
   * Writes one chunk of a load: its collection registered, its keys' columns made (and, after
   * the first chunk, the sort projection made to hold them), then `tsv` (`tsvRows` text naming
   * form columns the table may lack, which are skipped) in one synchronous insert.
   */
  loadRows(collection: string, keys: readonly SeenKey[], tsv: string): Promise<void>;
  /** Makes the sort projection hold the form columns added since the first chunk, if any. */
  finishLoad(): Promise<void>;
  /** The top-level keys whose paths have columns, or undefined where every key has them. */
  typedKeys(): readonly string[] | undefined;
}

/** The ClickHouse driver, with its workspaces' load side. */
export interface ClickHouseStorageDriver extends StorageDriver {
  readonly workspaces: ReadonlyMap<string, ClickHouseLoadTarget>;
}

class ClickHouseWorkspace implements ClickHouseLoadTarget {
  readonly database: string;
  readonly client: ClickHouseClient;
  /** The client rollup builds send their statements with ({@link ROLLUP_BUILD_TIMEOUT_MS}). */
  readonly builds: ClickHouseClient;
  /** The payload key paths with form columns in the event table. */
  readonly columns: KeyColumns;
  readonly #memoryLimit: string;
  /** The workspace's rollups, where it keeps them; set once, at open. */
  rollups: ClickHouseRollups | undefined;
  /** With automatic rollup keys: what the workspace's queries used, and the addition under way. */
  #auto: AutoRollups | undefined;
  /** Collections known to be in the catalog, so ingest registers each one once per process. */
  readonly #known = new Set<string>();
  /**
   * Ingest requests arriving while an insert runs share the next one: each MergeTree insert makes
   * a part, so one insert per request would cost ClickHouse a part (and its merges) per request.
   * One insert at a time: the requests' rows are rendered as they arrive, while it runs, so the
   * next insert carries every request that arrived meanwhile, ready to send; while several
   * writers send at once, it also waits a moment for more ({@link GATHER_MS}).
   */
  readonly #inserts = new GroupCommit<RenderedBatch>(
    (batches) => insertRendered(this.client, this.database, batches, isConnectionError),
    {
      concurrency: 1,
      maxSize: MAX_INSERT_EVENTS,
      sizeOf: (batch) => batch.events.length,
      gather: { size: GATHER_EVENTS, ms: GATHER_MS },
    },
  );
  /** Requests on their way to ClickHouse, from before their rows are rendered. */
  readonly #writing = new Set<Promise<void>>();

  constructor(
    database: string,
    { client, builds }: { client: ClickHouseClient; builds: ClickHouseClient },
    memoryLimit: string,
    columns: KeyColumnsOptions,
  ) {
    this.database = database;
    this.client = client;
    this.builds = builds;
    this.columns = new KeyColumns(client, database, columns);
    this.#memoryLimit = memoryLimit;
  }

  #run(limits: QueryLimits): ClickHouseRun {
    return {
      client: this.client,
      database: this.database,
      memoryLimit: this.#memoryLimit,
      ...limits,
    };
  }

  /** Lets the engine add rollup keys and sums that queries use (`../auto-rollups.ts`). */
  addKeys(name: string, log?: (sentence: string) => void): void {
    const ensure = async (names: readonly string[]) => {
      this.columns.allow(names);
      await this.columns.ensure(
        names.map((key) => ({ path: [key], kinds: new Set(['string' as const]) })),
      );
      return this.columns.lookup();
    };
    this.#auto = new AutoRollups(
      name,
      {
        spec: () => this.rollups?.spec,
        added: () => this.rollups?.added ?? { keys: 0, sums: 0 },
        keyValueCount: (key) =>
          keyValueCount(this.builds, this.database, key, this.columns.lookup()),
        extend: async (add) =>
          this.rollups &&
          extendClickHouseRollups(this.client, this.rollups, add, { ensure }, this.builds),
      },
      log,
    );
  }

  /** Waits for an addition to the rollups under way. */
  async idle(): Promise<void> {
    await this.#auto?.idle();
  }

  /** Closes the workspace's clients. */
  async close(): Promise<void> {
    await this.client.close();
    await this.builds.close();
  }

  async queryCollection(plan: CollectionPlan, limits: QueryLimits) {
    this.#auto?.observe(plan);
    const columns = this.columns.lookup();
    const sortFields = this.columns.sortFields();
    const projections = sortProjectionServes(plan.query, sortFields);
    const preferred = projections ? undefined : sortProjectionPreferred(plan.query, sortFields);
    const rollups = await this.rollups?.lookup();
    return runClickHouseCollectionQuery(plan, {
      ...this.#run(limits),
      columns,
      projections: projections || preferred !== undefined,
      ...(preferred === undefined ? {} : { preferredProjection: preferred }),
      ...(rollups ? { rollups } : {}),
    });
  }

  querySql(query: SqlQuery, limits: QueryLimits) {
    return runClickHouseSql(query, this.#run(limits));
  }

  async collectionNames(): Promise<string[]> {
    const result = await this.client.query({
      query: `SELECT name FROM ${quoteClickHouseIdentifier(this.database)}.${quoteClickHouseIdentifier(COLLECTIONS_TABLE)} GROUP BY name ORDER BY name`,
      format: 'JSONEachRow',
    });
    const rows = await result.json<{ name: string }>();
    return rows.map((r) => r.name);
  }

  async ingest(batch: IngestBatch): Promise<void> {
    if (RESERVED_NAMES.has(batch.collection)) {
      throw new EngineError(400, `collection name '${batch.collection}' is reserved`);
    }
    const written = this.#prepare(batch).then((rendered) => this.#inserts.submit(rendered));
    this.#writing.add(written);
    try {
      await written;
    } finally {
      this.#writing.delete(written);
    }
  }

  /** Resolves when every insert asked for so far has ended. */
  async inserted(): Promise<void> {
    while (this.#writing.size > 0) await Promise.allSettled(this.#writing);
    await this.#inserts.idle();
  }

  /** A request's collection registered, its keys' columns made, and its rows rendered. */
  async #prepare(batch: IngestBatch): Promise<RenderedBatch> {
    await this.#register(batch.collection);
    await this.columns.ensure(batch.keys);
    return renderBatch(batch, this.columns.forms());
  }

  /** The form columns the sort projection was last made to hold, during a load. */
  #projectedForms = -1;

  async loadRows(collection: string, keys: readonly SeenKey[], tsv: string): Promise<void> {
    if (RESERVED_NAMES.has(collection)) {
      throw new EngineError(400, `collection name '${collection}' is reserved`);
    }
    await this.#register(collection);
    await this.columns.ensure(keys);
    if (this.#projectedForms < 0) await this.finishLoad();
    const token = randomUUID();
    for (let attempt = 1; ; attempt++) {
      try {
        await insertTsv(this.client, this.database, tsv, token, true);
        return;
      } catch (error) {
        if (attempt >= LOAD_ATTEMPTS || !isConnectionError(error)) throw error;
      }
    }
  }

  typedKeys(): readonly string[] | undefined {
    return this.columns.typedKeys();
  }

  async finishLoad(): Promise<void> {
    const forms = this.columns.forms().length;
    if (forms === this.#projectedForms) return;
    await this.columns.project();
    this.#projectedForms = forms;
  }

  /** Records a collection in the catalog and gives it its SQL-mode view (both idempotent). */
  async #register(collection: string): Promise<void> {
    if (this.#known.has(collection)) return;
    // Requests arriving together for a new collection share one registration.
    let registering = this.#registering.get(collection);
    if (!registering) {
      registering = registerCollection(this.client, this.database, collection).finally(() =>
        this.#registering.delete(collection),
      );
      this.#registering.set(collection, registering);
    }
    await registering;
    if (this.#known.size >= KNOWN_COLLECTIONS) this.#known.clear();
    this.#known.add(collection);
  }

  /** Registrations under way, by collection. */
  readonly #registering = new Map<string, Promise<void>>();
}

/**
 * Whether a sort projection (one per key of `sortFields`) can serve a collection-mode query: it
 * serves filters on its key alone, and ClickHouse need not weigh it for any other query.
 */
export function sortProjectionServes(
  query: CollectionQuery,
  sortFields: readonly string[],
): boolean {
  if (sortFields.length === 0) return false;
  return [
    query.filters,
    query.compare_filters,
    query.numerator_filters,
    query.denominator_filters,
  ].some((groups) => groups?.some((group) => group.some(([name]) => sortFields.includes(name))));
}

/**
 * The sort projection a query that does not filter on its key reads all the same, by name: one
 * that aggregates a metric reads its values there grouped by the key, and a metric that only
 * some kinds of event carry (a purchase's price) lies in runs, which ClickHouse filters and
 * gathers faster than the same values spread through time. ClickHouse takes it only where it
 * reads no more granules than the table (a short window under a key of many values reads the
 * table). Counts read no metric, and Samples keep the table's time order.
 */
export function sortProjectionPreferred(
  query: CollectionQuery,
  sortFields: readonly string[],
): string | undefined {
  const [key] = sortFields;
  if (key === undefined || query.graph_type === 'Samples') return undefined;
  if (query.metric === null || query.aggregation === 'Count') return undefined;
  return sortProjectionName(key);
}

class ClickHouseDriver implements ClickHouseStorageDriver {
  readonly workspaces: ReadonlyMap<string, ClickHouseWorkspace>;

  constructor(workspaces: ReadonlyMap<string, ClickHouseWorkspace>) {
    this.workspaces = workspaces;
  }

  /** ClickHouse enforces the engine's time and memory limits; an unreachable server is an outage. */
  describeFailure(error: unknown): StorageFailure | undefined {
    return limitFailure(error) ?? (isConnectionError(error) ? 'unavailable' : undefined);
  }

  async close(): Promise<void> {
    for (const w of this.workspaces.values()) {
      // Requests already acknowledged as stored wait for their insert, as on DuckDB.
      await w.idle();
      await w.inserted();
      await w.close();
    }
  }
}
