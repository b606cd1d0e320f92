import type { DuckDBConnection } from '@duckdb/node-api';
import { compareText } from '../../text-order.ts';
import { comparePaths, fieldName } from '../key-path.ts';
import { quoteIdentifier } from './quote-identifier.ts';
import type { RollupLedger } from './rollups.ts';

/**
 * The catalog: which collections a workspace holds and, per collection, which payload keys have
 * typed columns. It lives in the workspace database (so it commits with the data it describes)
 * and is mirrored in memory for planning. Column and table names are generated from ids, never
 * from keys or collection names, so no payload text ever becomes an identifier of stored data.
 */

/** Schema of the engine's own tables (catalog and event tables). */
export const ENGINE_SCHEMA = '_engine';
/** Schema of the per-collection views that SQL mode queries. */
export const COLLECTIONS_SCHEMA = 'collections';
/**
 * Typed keys per collection in files written by earlier versions, which past it answered new keys
 * by JSON extraction at query time (the collection's `overflow`). Such collections keep doing so
 * for keys they had not typed; others type every key, table by table (see `Segment`).
 */
export const MAX_TYPED_KEYS = 500;

/** One payload key with typed columns. */
export interface KeyColumns {
  id: number;
  /** The object keys leading to the value. */
  path: string[];
  /** `path` joined with dots, as requests name it. */
  field: string;
  /** A VARCHAR column `k<id>_s`: the value's string form (strings, booleans, arrays, numbers). */
  hasString: boolean;
  /** A DOUBLE column `k<id>_n`: the numeric form (numbers, numeric-looking strings). */
  hasNumber: boolean;
  /** A VARCHAR[] column `k<id>_a`: array elements' string forms, for element tests. */
  hasArray: boolean;
}

/**
 * One table of a collection's events, with typed columns for the keys its events hold. Appends
 * go to the last segment; a batch whose keys would widen it far beyond what the batch needs
 * starts a new one, because DuckDB pays for every column of every appended row.
 */
export interface Segment {
  /** Schema-qualified, quoted table. */
  table: string;
  /** The typed columns it has, by name (`k<id>_s`). */
  columns: Set<string>;
  /**
   * Set once its rows were reordered (`cluster-rows.ts`): their ingest order is in its `seq`
   * column, not in their row ids.
   */
  reordered?: boolean;
}

/** One collection: its event tables, its SQL-mode view and its typed keys. */
export interface CollectionEntry {
  id: number;
  name: string;
  /** Schema-qualified, quoted first event table (the only one of most collections). */
  table: string;
  /** Every event table, in the order they were started (rows in ingest order across them). */
  segments: Segment[];
  /** Schema-qualified, quoted view exposing exactly `timestamp` and `json`. */
  view: string;
  keys: KeyColumns[];
  /** Set by earlier versions past {@link MAX_TYPED_KEYS}: untyped keys are read from payloads. */
  overflow: boolean;
  /** Set when the workspace keeps rollups (`rollups.ts`): every append adds to them. */
  rollup?: RollupLedger;
}

/** A typed key with the quoted names of its columns, null for a form none of its events has. */
export interface TypedKey {
  key: KeyColumns;
  string: string | null;
  number: string | null;
  array: string | null;
}

/** The column holding a reordered row's place in ingest order (its row id before; `cluster-rows.ts`). */
export const SEQ_COLUMN = 'seq';

const QUOTED_SEQ = quoteIdentifier(SEQ_COLUMN);

/**
 * A segment's rows in ingest order: the row id, or `seq` where the rows were reordered (rows
 * appended after the reordering have none, and their row ids come after every `seq`).
 */
export function ingestOrderSql(segment: Segment): string {
  return segment.reordered ? `coalesce(${QUOTED_SEQ}, rowid)` : 'rowid';
}

/** The column of one kind of a key. */
export function keyColumn(key: KeyColumns, kind: 's' | 'n' | 'a'): string {
  return quoteIdentifier(columnName(key, kind));
}

/** The unquoted name of {@link keyColumn}. */
export function columnName(key: KeyColumns, kind: 's' | 'n' | 'a'): string {
  return `k${key.id}_${kind}`;
}

/** The unquoted name, in {@link ENGINE_SCHEMA}, of segment `n` of a collection. */
export function segmentTableName(id: number, n: number): string {
  return n === 0 ? `events_${id}` : `events_${id}_${n}`;
}

/** The table of segment `n` of a collection (the first is the collection's own table). */
export function segmentTable(id: number, n: number): string {
  return `${quoteIdentifier(ENGINE_SCHEMA)}.${quoteIdentifier(segmentTableName(id, n))}`;
}

/** The event table and view names of a collection id. */
export function collectionRelations(id: number, name: string): { table: string; view: string } {
  return {
    table: `${quoteIdentifier(ENGINE_SCHEMA)}.${quoteIdentifier(`events_${id}`)}`,
    view: `${quoteIdentifier(COLLECTIONS_SCHEMA)}.${quoteIdentifier(name)}`,
  };
}

/** The statements that create the engine's schemas and catalog tables when missing. */
export const CATALOG_DDL = [
  `CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(ENGINE_SCHEMA)}`,
  `CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(COLLECTIONS_SCHEMA)}`,
  `CREATE TABLE IF NOT EXISTS ${ENGINE_SCHEMA}.collections (id INTEGER NOT NULL, name VARCHAR NOT NULL, overflow BOOLEAN NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${ENGINE_SCHEMA}.keys (collection_id INTEGER NOT NULL, key_id INTEGER NOT NULL, path VARCHAR NOT NULL, has_string BOOLEAN NOT NULL, has_number BOOLEAN NOT NULL, has_array BOOLEAN NOT NULL)`,
];

/**
 * The in-memory mirror of the catalog. Entries are replaced whole when a write commits, so a
 * query that picked up an entry keeps a consistent view of it.
 */
export class Catalog {
  readonly #collections = new Map<string, CollectionEntry>();
  readonly #fields = new WeakMap<CollectionEntry, Map<string, KeyColumns[]>>();
  readonly #typed = new WeakMap<CollectionEntry, Map<string, readonly TypedKey[]>>();
  #nextId = 1;

  /** Reads the catalog tables of a workspace database. */
  static async load(conn: DuckDBConnection): Promise<Catalog> {
    const catalog = new Catalog();
    const collections = await conn.runAndReadAll(
      `SELECT id, name, overflow FROM ${ENGINE_SCHEMA}.collections ORDER BY id`,
    );
    const keys = await conn.runAndReadAll(
      `SELECT collection_id, key_id, path, has_string, has_number, has_array FROM ${ENGINE_SCHEMA}.keys ORDER BY collection_id, key_id`,
    );
    const columns = await conn.runAndReadAll(
      `SELECT table_name, column_name FROM duckdb_columns() WHERE schema_name = '${ENGINE_SCHEMA}' AND table_name LIKE 'events%'`,
    );
    const tables = new Map<string, Set<string>>();
    const reordered = new Set<string>();
    for (const [table, column] of columns.getRows()) {
      const set = tables.get(String(table)) ?? new Set<string>();
      if (/^k\d+_[sna]$/.test(String(column))) set.add(String(column));
      if (column === SEQ_COLUMN) reordered.add(String(table));
      tables.set(String(table), set);
    }
    const byId = new Map<number, CollectionEntry>();
    for (const [id, name, overflow] of collections.getRows()) {
      const segments: Segment[] = [];
      for (let n = 0; tables.has(segmentTableName(Number(id), n)); n++) {
        const name = segmentTableName(Number(id), n);
        segments.push({
          table: segmentTable(Number(id), n),
          columns: tables.get(name) as Set<string>,
          ...(reordered.has(name) ? { reordered: true } : {}),
        });
      }
      const entry: CollectionEntry = {
        id: Number(id),
        name: String(name),
        ...collectionRelations(Number(id), String(name)),
        segments,
        keys: [],
        overflow: overflow === true,
      };
      byId.set(entry.id, entry);
    }
    for (const [collectionId, keyId, path, hasString, hasNumber, hasArray] of keys.getRows()) {
      const segments = JSON.parse(String(path)) as string[];
      byId.get(Number(collectionId))?.keys.push({
        id: Number(keyId),
        path: segments,
        field: fieldName(segments),
        hasString: hasString === true,
        hasNumber: hasNumber === true,
        hasArray: hasArray === true,
      });
    }
    for (const entry of byId.values()) catalog.publish(entry);
    return catalog;
  }

  /** The collection named `name`, if any event was ever written to it. */
  get(name: string): CollectionEntry | undefined {
    return this.#collections.get(name);
  }

  /** Every collection, by name (in the order ClickHouse's catalog lists them). */
  list(): CollectionEntry[] {
    return [...this.#collections.values()].sort((a, b) => compareText(a.name, b.name));
  }

  /** An id for a collection about to be created. */
  reserveId(): number {
    return this.#nextId++;
  }

  /**
   * The typed keys a dotted field name can refer to (a key may itself contain dots), in the
   * order an event's value is looked for: fewer keys first, then the longer first key.
   */
  fields(entry: CollectionEntry, field: string): readonly KeyColumns[] {
    return this.#fields.get(entry)?.get(field) ?? [];
  }

  /**
   * What binding a query reads of one collection, in one call: its entry and, for each field
   * name, the typed keys that spell it (in {@link fields}' order) with their quoted columns
   * (null for a form no event of the key has), and its segments with their ingest order;
   * undefined for a collection never written.
   */
  lookup(
    collection: string,
    names: readonly string[],
  ):
    | {
        entry: CollectionEntry;
        fields: Map<string, readonly TypedKey[]>;
        segments: Array<{ table: string; order: string }>;
      }
    | undefined {
    const entry = this.#collections.get(collection);
    if (!entry) return undefined;
    const typed = this.#typed.get(entry);
    const fields = new Map<string, readonly TypedKey[]>();
    for (const name of names) fields.set(name, typed?.get(name) ?? []);
    const segments = entry.segments.map((s) => ({ table: s.table, order: ingestOrderSql(s) }));
    return { entry, fields, segments };
  }

  /** Installs a committed version of a collection entry. */
  publish(entry: CollectionEntry): void {
    const fields = new Map<string, KeyColumns[]>();
    for (const key of entry.keys) {
      const list = fields.get(key.field) ?? [];
      list.push(key);
      fields.set(key.field, list);
    }
    for (const list of fields.values()) list.sort((a, b) => comparePaths(a.path, b.path));
    this.#collections.set(entry.name, entry);
    this.#fields.set(entry, fields);
    // Quoted once here, so that binding a query only looks its fields up.
    const typed = new Map<string, TypedKey[]>();
    for (const [name, list] of fields)
      typed.set(
        name,
        list.map((key) => ({
          key,
          string: key.hasString ? keyColumn(key, 's') : null,
          number: key.hasNumber ? keyColumn(key, 'n') : null,
          array: key.hasArray ? keyColumn(key, 'a') : null,
        })),
      );
    this.#typed.set(entry, typed);
    this.#nextId = Math.max(this.#nextId, entry.id + 1);
  }
}

/** A deep copy of an entry that a write can change and publish only after it commits. */
export function draftOf(entry: CollectionEntry): CollectionEntry {
  return {
    ...entry,
    keys: entry.keys.map((key) => ({ ...key, path: [...key.path] })),
    segments: entry.segments.map((s) => ({ ...s, columns: new Set(s.columns) })),
  };
}
