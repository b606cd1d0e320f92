import {
  type CollectionEntry,
  ENGINE_SCHEMA,
  SEQ_COLUMN,
  segmentTableName,
} from '../storage/duckdb/catalog.ts';
import { quoteIdentifier } from '../storage/duckdb/quote-identifier.ts';
import type { WorkspaceConnection, WorkspaceDb } from '../storage/duckdb/workspace-db.ts';

/** The name the scratch database is attached under. */
const ALIAS = 'load_scratch';

/**
 * A load's scratch database: a DuckDB file in the loader's staging directory, attached to the
 * workspace's instance, holding one table per segment of the collection with the segment's
 * columns. The loader appends the events there, in file order, and the clustering step copies
 * them into the workspace once, ordered (`storage/duckdb/cluster-rows.ts`): the workspace file is
 * written once, compressed once, and keeps no blocks of a table it replaced. The scratch file
 * is removed with the staging directory.
 */
export class LoadScratch {
  /** Per segment of the collection, the columns its scratch table has. */
  readonly #columns = new Map<number, Set<string>>();

  private constructor(readonly db: WorkspaceDb) {}

  /**
   * Attaches (creating) the scratch database at `file` to `db`, a database opened for loading
   * with `file` in its staging directory.
   */
  static async attach(db: WorkspaceDb, file: string): Promise<LoadScratch> {
    await run(db, `ATTACH ${pathLiteral(file)} AS ${quoteIdentifier(ALIAS)}`);
    return new LoadScratch(db);
  }

  /** Attaches the scratch database that another instance filled, to copy from it. */
  static async reattach(db: WorkspaceDb, file: string): Promise<LoadScratch> {
    await run(db, `ATTACH ${pathLiteral(file)} AS ${quoteIdentifier(ALIAS)} (READ_ONLY)`);
    return new LoadScratch(db);
  }

  /** The scratch table of segment `n` (quoted, qualified). */
  table(n: number): string {
    return `${quoteIdentifier(ALIAS)}.${quoteIdentifier(`segment_${n}`)}`;
  }

  /** The scratch tables that exist, by segment (read from the database). */
  async tables(): Promise<Map<number, string>> {
    const conn = await this.db.connect();
    const reader = await conn
      .runAndReadAll('SELECT table_name FROM duckdb_tables() WHERE database_name = $1', [ALIAS])
      .finally(() => conn.closeSync());
    const tables = new Map<number, string>();
    for (const [name] of reader.getRows()) {
      const m = /^segment_(\d+)$/.exec(String(name));
      if (m) tables.set(Number(m[1]), this.table(Number(m[1])));
    }
    return tables;
  }

  /** Whether the last segment's scratch table lacks any of the segment's columns. */
  needsColumns(entry: CollectionEntry): boolean {
    const n = entry.segments.length - 1;
    const has = this.#columns.get(n);
    const segment = entry.segments[n];
    return !has || !segment || [...segment.columns].some((c) => !has.has(c));
  }

  /**
   * Creates or widens the last segment's scratch table to the segment's columns, with the same
   * types. Must run while no transaction appends to it.
   */
  async mirror(conn: WorkspaceConnection, entry: CollectionEntry): Promise<void> {
    const n = entry.segments.length - 1;
    const name = segmentTableName(entry.id, n);
    const reader = await conn.runAndReadAll(
      `SELECT column_name, data_type FROM duckdb_columns()
       WHERE schema_name = $1 AND table_name = $2 AND database_name <> $3 ORDER BY column_index`,
      [ENGINE_SCHEMA, name, ALIAS],
    );
    const columns = reader
      .getRows()
      .map(([column, type]) => [String(column), String(type)] as const)
      .filter(([column]) => column !== SEQ_COLUMN);
    const has = this.#columns.get(n);
    if (!has) {
      // No NOT NULL: the scratch holds only what the loader wrote, and the copy checks again.
      const definitions = columns.map(([c, t]) => `${quoteIdentifier(c)} ${t}`);
      await conn.run(`CREATE TABLE ${this.table(n)} (${definitions.join(', ')})`);
      this.#columns.set(n, new Set(columns.map(([c]) => c)));
      return;
    }
    for (const [c, t] of columns) {
      if (has.has(c)) continue;
      await conn.run(`ALTER TABLE ${this.table(n)} ADD COLUMN ${quoteIdentifier(c)} ${t}`);
      has.add(c);
    }
  }

  /** Detaches the scratch database (the caller removes the file). */
  async detach(): Promise<void> {
    await run(this.db, `DETACH ${quoteIdentifier(ALIAS)}`);
  }
}

/** Runs one statement on a connection of its own. */
async function run(db: WorkspaceDb, sql: string): Promise<void> {
  const conn = await db.connect();
  try {
    await conn.run(sql);
  } finally {
    conn.closeSync();
  }
}

/** A file path as SQL text (ATTACH takes no parameters); the path is the loader's own. */
function pathLiteral(path: string): string {
  return `'${path.replaceAll("'", "''")}'`;
}
