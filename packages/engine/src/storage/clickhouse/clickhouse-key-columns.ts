import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { SeenKey } from '../../ingest/discover-keys.ts';
import {
  clickHouseStringLiteral,
  EVENTS_TABLE,
  quoteClickHouseIdentifier,
} from './clickhouse-schema.ts';

/**
 * Key columns for payload key paths: per path, `k_<hash> String DEFAULT JSONExtractRaw(json,
 * <keys>)`, the JSON text of the event's value there ('' where it has none). ClickHouse writes it
 * for every insert (which names only the four stored columns), computes it on read for parts
 * written before it existed, and writes it there when parts merge or are materialized. Queries
 * read a field from it with the same JSON functions, without path arguments, so the answers are
 * the extraction's, over a few bytes per event instead of the whole payload. A typed DEFAULT (the
 * numeric and string forms themselves) was not chosen: ClickHouse analyses DEFAULT expressions
 * on every insert, and the forms' `multiIf`s cost about ten times the raw extraction there.
 *
 * The table's own column list is the catalog: a column's name is a hash of its path, so every
 * engine on the same ClickHouse names a path's column alike, and a query uses a column only when
 * the list it last read holds it (an engine that has not seen a path yet reads the JSON, with
 * the same answer).
 */

/** Paths deeper than this are read from the JSON only. */
const MAX_COLUMN_DEPTH = 3;
/** Paths a workspace gives columns to; the rest are read from the JSON. */
export const MAX_KEY_COLUMNS = 64;
/** How long queries trust the list of columns before it is read again. */
const REFRESH_MS = 10_000;
/** Events whose top-level keys are given columns when an engine opens a workspace. */
const OPENING_SAMPLE = 100_000;

const COLUMN = /^k_[0-9a-f]{24}$/;
/** Keys that go into a DEFAULT as literals: no control characters or lone UTF-16 halves. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const LITERAL_KEY = /^[^\u0000-\u001f\ud800-\udfff]{0,200}$/;

/** Which key paths have columns, as one query sees them. */
export interface KeyColumnLookup {
  /** The quoted name of the column holding the JSON text at `path`, if the query may use one. */
  column(path: readonly string[]): string | undefined;
}

/** The lookup of a table without key columns. */
export const NO_KEY_COLUMNS: KeyColumnLookup = { column: () => undefined };

function baseName(path: readonly string[]): string {
  return `k_${createHash('sha256').update(JSON.stringify(path)).digest('hex').slice(0, 24)}`;
}

function eligible(path: readonly string[]): boolean {
  return path.length <= MAX_COLUMN_DEPTH && path.every((key) => LITERAL_KEY.test(key));
}

/** The ALTER that gives `paths` their columns (idempotent: any engine may run it again). */
export function addKeyColumnsSql(database: string, paths: readonly (readonly string[])[]): string {
  const adds = paths.map((path) => {
    const keys = path.map(clickHouseStringLiteral).join(', ');
    return `ADD COLUMN IF NOT EXISTS ${quoteClickHouseIdentifier(baseName(path))} String
  DEFAULT JSONExtractRaw(json, ${keys}) COMMENT ${clickHouseStringLiteral(JSON.stringify(path))} CODEC(ZSTD(1))`;
  });
  return `ALTER TABLE ${quoteClickHouseIdentifier(database)}.${quoteClickHouseIdentifier(EVENTS_TABLE)}
  ${adds.join(',\n  ')}`;
}

class KeyColumnSet implements KeyColumnLookup {
  readonly #bases: ReadonlySet<string>;
  constructor(bases: ReadonlySet<string>) {
    this.#bases = bases;
  }
  column(path: readonly string[]): string | undefined {
    if (this.#bases.size === 0 || !eligible(path)) return undefined;
    const base = baseName(path);
    return this.#bases.has(base) ? quoteClickHouseIdentifier(base) : undefined;
  }
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
  #bases = new Set<string>();
  #lookup: KeyColumnLookup = NO_KEY_COLUMNS;
  #readAt = Number.NEGATIVE_INFINITY;
  #reading: Promise<void> | undefined;
  #writable = false;

  constructor(client: ClickHouseClient, database: string) {
    this.#client = client;
    this.#database = database;
  }

  /**
   * Reads the existing columns and gives the most frequent top-level keys of the table's first
   * events columns, materialized in the background (a mutation), so events that arrived some
   * other way (an import, an engine without key columns) are read from columns too.
   */
  async open(): Promise<void> {
    const tables = await this.#rows<{ engine: string }>(
      `SELECT engine FROM system.tables WHERE database = {db:String} AND name = {table:String}`,
    );
    this.#writable = tables.length === 1 && tables[0]?.engine !== 'Distributed';
    await this.#read();
    if (!this.#writable || this.#bases.size >= MAX_KEY_COLUMNS) return;
    const keys = await this.#rows<{ key: string }>(
      `SELECT key FROM (SELECT json FROM {db:Identifier}.{table:Identifier} LIMIT ${OPENING_SAMPLE})
       ARRAY JOIN JSONExtractKeys(json) AS key GROUP BY key ORDER BY count() DESC, key
       LIMIT ${MAX_KEY_COLUMNS}`,
    );
    const added = await this.#add(keys.map((row) => [row.key]));
    for (const path of added) {
      await this.#client.command({
        query: `ALTER TABLE ${this.#table()} MATERIALIZE COLUMN ${quoteClickHouseIdentifier(baseName(path))}`,
      });
    }
  }

  /** The columns a query may use: the list last read, read again when it is old. */
  async lookup(now = Date.now()): Promise<KeyColumnLookup> {
    if (now - this.#readAt > REFRESH_MS) {
      this.#reading ??= this.#read().finally(() => {
        this.#reading = undefined;
      });
      await this.#reading;
    }
    return this.#lookup;
  }

  /** Gives the paths of an ingest batch their columns, before its insert. */
  async ensure(keys: readonly SeenKey[]): Promise<void> {
    if (!this.#writable || this.#bases.size >= MAX_KEY_COLUMNS) return;
    const paths = keys
      .filter((key) => [...key.kinds].some((kind) => kind !== 'object'))
      .map((key) => key.path);
    await this.#add(paths);
  }

  /** Adds the columns of the paths not yet known, within the bound; returns those it added. */
  async #add(paths: readonly (readonly string[])[]): Promise<(readonly string[])[]> {
    const fresh: (readonly string[])[] = [];
    const bases = new Set<string>();
    for (const path of paths) {
      if (this.#bases.size + fresh.length >= MAX_KEY_COLUMNS) break;
      if (!eligible(path)) continue;
      const base = baseName(path);
      if (this.#bases.has(base) || bases.has(base)) continue;
      bases.add(base);
      fresh.push(path);
    }
    if (fresh.length === 0) return fresh;
    await this.#client.command({ query: addKeyColumnsSql(this.#database, fresh) });
    this.#bases = new Set([...this.#bases, ...bases]);
    this.#lookup = new KeyColumnSet(this.#bases);
    return fresh;
  }

  async #read(): Promise<void> {
    const readAt = Date.now();
    const rows = await this.#rows<{ name: string }>(
      `SELECT name FROM system.columns WHERE database = {db:String} AND table = {table:String}`,
    );
    this.#bases = new Set(rows.map((row) => row.name).filter((name) => COLUMN.test(name)));
    this.#lookup = new KeyColumnSet(this.#bases);
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
