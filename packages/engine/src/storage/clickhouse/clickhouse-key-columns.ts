import { type ClickHouseClient, ClickHouseError } from '@clickhouse/client-web';
import type { SeenKey } from '../seen-key.ts';
import { withBuildLock } from './clickhouse-build-lock.ts';
import { NUMERIC_TEXT, numericFormSql, stringFormSql } from './clickhouse-forms.ts';
import {
  MARKED_JSON,
  type PayloadReader,
  payloadColumnsSql,
  READABLE_JSON,
  readPayloadColumn,
  readPayloadInline,
} from './clickhouse-readable-json.ts';
import {
  formColumnBase as baseName,
  formColumnsOf as columnsOf,
  formColumnsAllowed as eligible,
  type FormColumns,
  MAX_KEY_COLUMNS,
} from './clickhouse-rows.ts';
import {
  clickHouseStringLiteral,
  EVENTS_TABLE,
  quoteClickHouseIdentifier,
} from './clickhouse-schema.ts';

/**
 * Key columns for payload key paths: per path, the value's two forms as typed columns,
 * `n_<hash> Nullable(Float64)` and `s_<hash> Nullable(String)` (`clickhouse-forms.ts`). Ingest
 * computes them in JavaScript and names them in its insert; their DEFAULT expressions compute
 * the same forms from the payload (`json_readable`, `clickhouse-readable-json.ts`), so rows
 * written any other way (an import through ClickHouse, an engine that had not read the column
 * list yet, parts older than the columns) read the same.
 * Queries read the columns themselves: a filter is a comparison of a column, an aggregate reads
 * Float64s, and a value is present exactly where its string form is not NULL.
 *
 * The table's own column list is the catalog: a column's name is a hash of its path (its COMMENT
 * holds the path), so every engine on the same ClickHouse names a path's columns alike, and a
 * query uses them only when the list it last read holds them (an engine that has not seen a
 * path yet reads the JSON, with the same answer). Tables written by engines that kept the raw
 * JSON text per path (`k_<hash> String`) get typed columns for those paths when opened.
 *
 * A workspace may type only some top-level keys (`keys`): paths under the others are read from
 * the JSON, as paths past the bound are, and cost inserts and each query's planning nothing.
 *
 * Columns are an optimisation, never a condition of a write: where ClickHouse refuses an ALTER
 * (a table's metadata has a size limit, a user may lack the right), its paths stay read from the
 * JSON, with the same answers, and the refusal is logged.
 */

/** How long queries trust the list of columns before it is read again. */
const REFRESH_MS = 10_000;
/** Events whose top-level keys are given columns when an engine opens a workspace. */
const OPENING_SAMPLE = 100_000;

const FORM_COLUMN = /^([ns])_([0-9a-f]{24})$/;
const RAW_COLUMN = /^k_[0-9a-f]{24}$/;

export type { FormColumns } from './clickhouse-rows.ts';

/**
 * Which key paths have columns, as one query sees them: a value, so that bind reads it without
 * calling back here. A path's columns are those of its base name (`formColumnBase`, in
 * `clickhouse-rows.ts`) where the path may have columns (`formColumnsAllowed`).
 */
export interface KeyColumnLookup {
  /** Per base name of a path, the quoted names of the columns holding its forms. */
  bases: ReadonlyMap<string, { number: string; string: string }>;
  /** How the query reads the payload at paths without columns. */
  payload: PayloadReader;
}

/** The lookup of a table without key columns or the readable payload's columns. */
export const NO_KEY_COLUMNS: KeyColumnLookup = {
  bases: new Map(),
  payload: readPayloadInline,
};

/** Whether a top-level key may order the sort projection (a key given columns). */
export function sortFieldAllowed(key: string): boolean {
  return key.length > 0 && eligible([key]);
}

/** The name of the sort projection ordered by the top-level key `key`. */
export function sortProjectionName(key: string): string {
  return `p_${baseName([key])}`;
}

/**
 * The ALTER that gives `paths` their columns (idempotent: any engine may run it again), after
 * the readable payload's columns, which their DEFAULTs read, where `payload` asks for them. The
 * string form of `sortField`, a key chosen for the filters it takes, is `LowCardinality`, which
 * compares a dictionary's few values rather than each event's text.
 */
export function addKeyColumnsSql(
  database: string,
  paths: readonly (readonly string[])[],
  sortField?: string,
  payload = true,
): string {
  const payloadAdds = payload
    ? payloadColumnsSql().map((column) => `ADD COLUMN IF NOT EXISTS ${column}`)
    : [];
  const keyAdds = paths.flatMap((path) => {
    const keys = `${READABLE_JSON}, ${path.map(clickHouseStringLiteral).join(', ')}`;
    const { number, string } = columnsOf(path);
    const comment = `COMMENT ${clickHouseStringLiteral(JSON.stringify(path))}`;
    const categorical = path.length === 1 && path[0] === sortField;
    const type = categorical ? 'LowCardinality(Nullable(String))' : 'Nullable(String)';
    return [
      `ADD COLUMN IF NOT EXISTS ${quoteClickHouseIdentifier(number)} Nullable(Float64)
  DEFAULT ${numericFormSql(keys, clickHouseStringLiteral(NUMERIC_TEXT))} ${comment}`,
      `ADD COLUMN IF NOT EXISTS ${quoteClickHouseIdentifier(string)} ${type}
  DEFAULT ${stringFormSql(keys)} ${comment}`,
    ];
  });
  return `ALTER TABLE ${quoteClickHouseIdentifier(database)}.${quoteClickHouseIdentifier(EVENTS_TABLE)}
  ${[...payloadAdds, ...keyAdds].join(',\n  ')}`;
}

/**
 * One workspace's key columns: which exist (read from ClickHouse, again after
 * {@link REFRESH_MS}) and the adding of new paths' columns as ingest meets them. On a
 * `Distributed` event table (a cluster) no columns are added: there an ALTER must reach every
 * shard's local table and the Distributed table `ON CLUSTER`, which the engine does not do yet.
 */
export class KeyColumns {
  readonly #client: ClickHouseClient;
  readonly #database: string;
  #bases = new Map<string, FormColumns>();
  #lookup: KeyColumnLookup = NO_KEY_COLUMNS;
  #readAt = Number.NEGATIVE_INFINITY;
  #reading: Promise<void> | undefined;
  #writable = false;
  /** Paths of raw-text columns an older engine added, given form columns on opening. */
  #rawPaths: (readonly string[])[] = [];
  /** Top-level keys a sort projection of the table orders by, whichever engine made it. */
  #projected: readonly string[] = [];
  /** The opening's background step (see {@link open}). */
  #opening: Promise<void> = Promise.resolve();
  /** Whether the table has the readable payload's columns (`clickhouse-readable-json.ts`). */
  #payload = false;
  /** Whether ClickHouse refused to add them, so they are not asked for again without paths. */
  #payloadRefused = false;
  /** Paths whose columns ClickHouse refused: they stay read from the JSON, and use up the bound. */
  readonly #refused = new Set<string>();

  readonly #sortField: string | undefined;
  /** The top-level keys whose paths may have columns, or undefined for every key. */
  readonly #keys: Set<string> | undefined;
  readonly #log: (sentence: string) => void;

  /**
   * `sortField`: a top-level payload key whose string form orders a projection ({@link open});
   * `keys`: the top-level keys given columns, with the sort field ({@link allow} adds more);
   * `log`: where a refused ALTER is told, as a sentence without SQL.
   */
  constructor(client: ClickHouseClient, database: string, options: KeyColumnsOptions = {}) {
    this.#client = client;
    this.#database = database;
    this.#sortField = options.sortField;
    this.#keys = options.keys && new Set(options.keys);
    if (options.sortField !== undefined) this.#keys?.add(options.sortField);
    this.#log = options.log ?? ((sentence) => console.error(`analytics-engine: ${sentence}`));
  }

  /**
   * Lets the paths of the top-level `keys` have columns where the workspace types only some
   * keys: rollups read their keys and sums from columns.
   */
  allow(keys: readonly string[]): void {
    for (const key of keys) this.#keys?.add(key);
  }

  /** The top-level keys whose paths may have columns, or undefined for every key. */
  typedKeys(): string[] | undefined {
    return this.#keys && [...this.#keys];
  }

  /**
   * Reads the existing columns and gives the paths of older raw-text columns and the most
   * frequent top-level keys of the table's first events columns, materialized in the
   * background (a mutation), so events that arrived some other way (an import, an engine
   * without key columns) are read from columns too.
   */
  async open(): Promise<void> {
    const tables = await this.#rows<{ engine: string }>(
      `SELECT engine FROM system.tables WHERE database = {db:String} AND name = {table:String}`,
    );
    this.#writable = tables.length === 1 && tables[0]?.engine !== 'Distributed';
    await this.#read();
    if (!this.#writable) return;
    // A table made before the readable payload's columns gets them first, so that the keys
    // below are read from them too; its parts compute them when read until materialized.
    const payloadAdded = !this.#payload && (await this.#add([])) !== undefined;
    const materialize = payloadAdded ? [MARKED_JSON] : [];
    if (this.#bases.size + this.#refused.size < MAX_KEY_COLUMNS) {
      const payload = this.#payload ? READABLE_JSON : 'json';
      // Keys counted where ingest would give them columns (`ensure`): a value neither an object
      // nor null. An object's own keys have columns of their own; giving the object columns
      // here too would leave the sort projection a load made lacking them, and rebuilt.
      const keys = await this.#rows<{ key: string }>(
        `SELECT kv.1 AS key FROM (SELECT ${payload} AS p FROM {db:Identifier}.{table:Identifier} LIMIT ${OPENING_SAMPLE})
         ARRAY JOIN JSONExtractKeysAndValuesRaw(p) AS kv
         WHERE NOT (startsWith(kv.2, '{') OR kv.2 = 'null')
         GROUP BY key ORDER BY count() DESC, key LIMIT ${MAX_KEY_COLUMNS}`,
      );
      const sorted = this.#sortField === undefined ? [] : [[this.#sortField]];
      const paths = [...sorted, ...this.#rawPaths, ...keys.map((row) => [row.key])];
      for (const path of (await this.#add(paths)) ?? []) {
        const { number, string } = columnsOf(path);
        materialize.push(number, string);
      }
    }
    // Not awaited: over a large table a mutation can outlast the client's request timeout (an
    // in-process ClickHouse runs it before answering), and answers do not depend on it, since
    // parts without a column compute it from its DEFAULT when read.
    this.#opening = this.#materialize(materialize);
  }

  /**
   * Makes the sort projection hold every form column there is now (after the opening's own
   * step), so that inserts from here on fill it as they write their parts: a loader calls it once
   * its first events have their columns, instead of a mutation over the whole table afterwards.
   */
  async project(): Promise<void> {
    await this.#opening;
    if (this.#writable && this.#sortField !== undefined) await this.#project([this.#sortField]);
  }

  /**
   * Writes the new `columns` into the parts that predate them, then the sort projection. A step
   * that fails or times out is left to ClickHouse: the columns exist, and a server goes on
   * with a mutation its client stopped waiting for.
   */
  async #materialize(columns: readonly string[]): Promise<void> {
    const ignore = () => undefined;
    if (columns.length > 0) await this.#materializeOnce(columns).catch(ignore);
    if (this.#sortField !== undefined) await this.#project([this.#sortField]).catch(ignore);
  }

  /**
   * Writes each of `columns` into the parts once, whichever engines opened the table together:
   * under the build lock, a column another engine already has a mutation for is left to it.
   */
  async #materializeOnce(columns: readonly string[]): Promise<void> {
    await withBuildLock(this.#client, this.#database, async () => {
      const queued = await this.#rows<{ command: string }>(
        `SELECT command FROM system.mutations WHERE database = {db:String} AND table = {table:String}
           AND position(command, 'MATERIALIZE COLUMN') > 0`,
      );
      for (const column of columns) {
        // Form column names are letters, digits and `_`: no character a pattern reads.
        const named = new RegExp(`MATERIALIZE COLUMN \`?${column}(?![A-Za-z0-9_])`);
        if (queued.some(({ command }) => named.test(command))) continue;
        await this.#client.command({
          query: `ALTER TABLE ${this.#table()} MATERIALIZE COLUMN ${quoteClickHouseIdentifier(column)}`,
        });
      }
    });
  }

  /**
   * A projection of the form columns sorted by the collection, then `path`'s string form, then
   * time: ClickHouse answers a query that filters on that field from it, reading only the
   * matching range, as a table sorted by it would, while Samples keep reading the table in
   * time order. It holds the form columns that exist when an engine opens the workspace (one
   * that finds it lacking some makes it again); a query that reads a column added later reads
   * the table.
   */
  async #project(path: readonly string[]): Promise<void> {
    const sorted = this.#bases.get(baseName(path));
    if (!sorted) return;
    const name = sortProjectionName(path[0] as string);
    const forms = this.forms().flatMap((c) => [c.number, c.string]);
    // Replicas opening together build it once: the one holding the build lock builds it, the
    // others wait for the lock to go and then find it built.
    if (projectionStep(await this.#projection(name), forms) === 'none') return;
    await withBuildLock(this.#client, this.#database, async () => {
      const step = projectionStep(await this.#projection(name), forms);
      if (step !== 'none') await this.#build(step, name, sorted.string, forms);
    });
  }

  /** What the table holds of the projection `name` (see {@link ProjectionState}). */
  async #projection(name: string): Promise<ProjectionState> {
    const literal = clickHouseStringLiteral(name);
    const [row] = await this.#rows<{
      defined: string;
      query: string;
      without: string;
      pending: string;
    }>(
      `SELECT
         (SELECT count() FROM system.projections
          WHERE database = {db:String} AND table = {table:String} AND name = ${literal}) AS defined,
         (SELECT any(query) FROM system.projections
          WHERE database = {db:String} AND table = {table:String} AND name = ${literal}) AS query,
         (SELECT count() FROM system.parts
          WHERE database = {db:String} AND table = {table:String} AND active
            AND NOT has(projections, ${literal})) AS without,
         (SELECT count() FROM system.mutations
          WHERE database = {db:String} AND table = {table:String} AND NOT is_done
            AND position(command, 'MATERIALIZE PROJECTION') > 0
            AND position(command, ${literal}) > 0) AS pending`,
    );
    return {
      query: Number(row?.defined) > 0 ? (row?.query ?? '') : undefined,
      partsWithout: Number(row?.without ?? 0),
      pending: Number(row?.pending ?? 0) > 0,
    };
  }

  /** Runs `step` for the projection `name`, ordered by the column `sorted`, holding `forms`. */
  async #build(
    step: Exclude<ProjectionStep, 'none'>,
    name: string,
    sorted: string,
    forms: readonly string[],
  ): Promise<void> {
    const quoted = quoteClickHouseIdentifier(name);
    if (step === 'rebuild') {
      await this.#client.command({
        query: `ALTER TABLE ${this.#table()} DROP PROJECTION IF EXISTS ${quoted}`,
      });
    }
    if (step !== 'materialize') {
      const columns = ['collection', 'timestamp', ...forms].map(quoteClickHouseIdentifier);
      await this.#client.command({
        query: `ALTER TABLE ${this.#table()} ADD PROJECTION IF NOT EXISTS ${quoted} (
  SELECT ${columns.join(', ')}
  ORDER BY collection, ${quoteClickHouseIdentifier(sorted)}, timestamp)`,
      });
    }
    await this.#client.command({
      query: `ALTER TABLE ${this.#table()} MATERIALIZE PROJECTION ${quoted}`,
    });
  }

  /**
   * The columns a query may use: the list last read. When it is old it is read again in the
   * background, so no query waits for that round trip; columns are only ever added, so an old
   * list names only columns that exist.
   */
  lookup(now = Date.now()): KeyColumnLookup {
    if (now - this.#readAt > REFRESH_MS) {
      this.#reading ??= this.#read()
        .catch(() => {
          // Kept: the old list stays right, and the next query tries again.
        })
        .finally(() => {
          this.#reading = undefined;
        });
    }
    return this.#lookup;
  }

  /**
   * The top-level keys whose sort projection queries may weigh: the one this engine was given
   * and those of the projections found in the table, so that an engine started without
   * `sortField` reads the projection another engine made.
   */
  sortFields(): readonly string[] {
    this.lookup();
    const given = this.#sortField;
    return given === undefined || this.#projected.includes(given)
      ? this.#projected
      : [given, ...this.#projected];
  }

  /** The form columns an insert may name: those of the list last read or added. */
  forms(): FormColumns[] {
    this.lookup();
    return [...this.#bases.values()];
  }

  /**
   * Gives the paths of an ingest batch their columns, before its insert. It never fails the
   * write: paths whose columns ClickHouse refuses stay read from the JSON.
   */
  async ensure(keys: readonly SeenKey[]): Promise<void> {
    if (!this.#writable || this.#bases.size + this.#refused.size >= MAX_KEY_COLUMNS) return;
    const paths = keys
      .filter((key) => [...key.kinds].some((kind) => kind !== 'object'))
      .map((key) => key.path);
    if ((this.#payload || this.#payloadRefused) && !paths.some((path) => this.#lacks(path))) return;
    // One ALTER at a time: requests arriving together with the same new paths wait for the
    // first one's, then find nothing left to add.
    const added = this.#adding.then(() => this.#add(paths));
    this.#adding = added.then(
      () => undefined,
      () => undefined,
    );
    await added;
  }

  /** The ALTER of {@link ensure} under way, if any. */
  #adding: Promise<void> = Promise.resolve();

  /** Whether `path` may have columns and has none yet (nor was refused them). */
  #lacks(path: readonly string[]): boolean {
    if (!this.#typed(path)) return false;
    const base = baseName(path);
    return !this.#bases.has(base) && !this.#refused.has(base);
  }

  /**
   * Adds the columns of the paths not yet known, within the bound, and the readable payload's
   * columns where the table lacks them; returns the paths it added, or `undefined` where
   * ClickHouse refused the ALTER (logged; its paths then count as refused).
   */
  async #add(paths: readonly (readonly string[])[]): Promise<(readonly string[])[] | undefined> {
    const fresh = new Map<string, FormColumns>();
    for (const path of paths) {
      if (this.#bases.size + this.#refused.size + fresh.size >= MAX_KEY_COLUMNS) break;
      if (!this.#typed(path)) continue;
      const base = baseName(path);
      if (this.#bases.has(base) || this.#refused.has(base) || fresh.has(base)) continue;
      fresh.set(base, columnsOf(path));
    }
    if (fresh.size === 0 && (this.#payload || this.#payloadRefused)) return [];
    const added = [...fresh.values()].map((columns) => columns.path);
    try {
      await this.#client.command({
        query: addKeyColumnsSql(this.#database, added, this.#sortField, !this.#payload),
      });
    } catch (error) {
      if (error instanceof ClickHouseError) {
        for (const base of fresh.keys()) this.#refused.add(base);
        if (!this.#payload) this.#payloadRefused = true;
      }
      this.#log(refusal(this.#database, added.length, error));
      return undefined;
    }
    this.#payload = true;
    this.#bases = new Map([...this.#bases, ...fresh]);
    this.#lookup = this.#lookupOf(this.#bases);
    return added;
  }

  /** Whether `path` may have columns: {@link eligible}, under a key the workspace types. */
  #typed(path: readonly string[]): boolean {
    return eligible(path) && (this.#keys === undefined || this.#keys.has(path[0] as string));
  }

  #lookupOf(bases: ReadonlyMap<string, FormColumns>): KeyColumnLookup {
    const quoted = new Map(
      [...bases].map(([base, { number, string }]) => [
        base,
        { number: quoteClickHouseIdentifier(number), string: quoteClickHouseIdentifier(string) },
      ]),
    );
    return { bases: quoted, payload: this.#payload ? readPayloadColumn : readPayloadInline };
  }

  async #read(): Promise<void> {
    const readAt = Date.now();
    const [rows, projections] = await Promise.all([
      this.#rows<{ name: string; comment: string }>(
        `SELECT name, comment FROM system.columns WHERE database = {db:String} AND table = {table:String}`,
      ),
      this.#rows<{ name: string }>(
        `SELECT name FROM system.projections WHERE database = {db:String} AND table = {table:String}`,
      ),
    ]);
    const names = new Set(rows.map((row) => row.name));
    this.#payload = names.has(MARKED_JSON) && names.has(READABLE_JSON);
    const bases = new Map<string, FormColumns>();
    const raw: (readonly string[])[] = [];
    for (const row of rows) {
      const path = pathOf(row.comment);
      if (!path) continue;
      if (RAW_COLUMN.test(row.name)) raw.push(path);
      const form = FORM_COLUMN.exec(row.name);
      // A path counts once both of its columns are there (an ALTER adds them together).
      if (form?.[1] !== 's' || baseName(path) !== form[2]) continue;
      const columns = columnsOf(path);
      if (names.has(columns.number)) bases.set(form[2], columns);
    }
    this.#bases = bases;
    this.#rawPaths = raw;
    this.#projected = projections.flatMap(({ name }) => {
      const path = bases.get(/^p_([0-9a-f]{24})$/.exec(name)?.[1] ?? '')?.path;
      return path?.length === 1 ? [path[0] as string] : [];
    });
    this.#lookup = this.#lookupOf(this.#bases);
    this.#readAt = readAt;
  }

  #table(): string {
    return `${quoteClickHouseIdentifier(this.#database)}.${quoteClickHouseIdentifier(EVENTS_TABLE)}`;
  }

  async #rows<T>(query: string): Promise<T[]> {
    const result = await this.#client.query({
      query,
      format: 'JSONEachRow',
      query_params: { db: this.#database, table: EVENTS_TABLE },
    });
    return result.json<T>();
  }
}

/** How a {@link KeyColumns} works and where it tells what it could not do. */
export interface KeyColumnsOptions {
  /** A top-level payload key whose string form orders a projection. */
  sortField?: string;
  /**
   * The top-level payload keys whose paths get columns; the others are read from the payload
   * (default: every key, within {@link MAX_KEY_COLUMNS} paths).
   */
  keys?: readonly string[];
  /** Where a refused ALTER is told (default: standard error). */
  log?: (sentence: string) => void;
}

/** What the table holds of a sort projection, as {@link projectionStep} weighs it. */
export interface ProjectionState {
  /** Its definition (`system.projections.query`), or undefined where the table has none. */
  query: string | undefined;
  /** Active parts written without it (before it was added, or its build stopped). */
  partsWithout: number;
  /** Whether a MATERIALIZE of it is still running, which will write those parts. */
  pending: boolean;
}

/** What an engine does to a sort projection; every step but `none` is a mutation. */
export type ProjectionStep = 'none' | 'add' | 'rebuild' | 'materialize';

/**
 * The step that makes the sort projection hold the form columns `forms` in every part: none
 * where it holds them and its parts have it (or a MATERIALIZE under way will write them), so an
 * engine opening a workspace a load or another engine gave the projection leaves it as it is.
 */
export function projectionStep(state: ProjectionState, forms: readonly string[]): ProjectionStep {
  if (state.query === undefined) return 'add';
  const held = new Set(state.query.match(/\b[ns]_[0-9a-f]{24}\b/g));
  if (!forms.every((column) => held.has(column))) return 'rebuild';
  return state.partsWithout > 0 && !state.pending ? 'materialize' : 'none';
}

/**
 * The sentence logged for a refused ALTER: ClickHouse's error code and name, never its message,
 * which may quote the SQL.
 */
function refusal(database: string, paths: number, error: unknown): string {
  const cause =
    error instanceof ClickHouseError
      ? `ClickHouse error ${error.code} (${error.type ?? 'unnamed'})`
      : `${error instanceof Error ? error.name : 'a failure'} before ClickHouse answered`;
  return paths === 0
    ? `could not add the readable payload's columns to ${database}'s event table: ${cause}; queries read the payload through the rewrite written out in them`
    : `could not add the columns of ${paths} key path(s) to ${database}'s event table: ${cause}; those paths are read from the JSON payload`;
}

/** The key path a column's COMMENT holds, if it holds one. */
function pathOf(comment: string): string[] | undefined {
  try {
    const path: unknown = JSON.parse(comment);
    return Array.isArray(path) && path.every((key) => typeof key === 'string') ? path : undefined;
  } catch {
    return undefined;
  }
}
