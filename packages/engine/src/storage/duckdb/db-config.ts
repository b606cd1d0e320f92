import { sep } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { DuckDBInstance } from './duckdb-api.ts';

/** Settings that size a workspace database. */
export interface WorkspaceDbOptions {
  /** DuckDB memory limit for the workspace, e.g. `'2GB'`. */
  memoryLimit?: string;
  /** Worker threads DuckDB may use for one query. */
  threads?: number;
  /** WAL size that triggers an automatic checkpoint, e.g. `'256MB'` (DuckDB's default 16MB). */
  checkpointThreshold?: string;
}

/**
 * The storage format new workspace files are written in (files made before keep theirs): from
 * v1.3.0 DuckDB compresses text columns with a dictionary and FSST in one pass (`DICT_FSST`),
 * which makes loading, and filters and splits on string keys, cheaper than the default format;
 * v1.2.0 and later can also compress the payload text with zstd (see {@link payloadColumnType}).
 * Readable by DuckDB 1.3 and later.
 */
export const STORAGE_VERSION = 'v1.3.0';

/**
 * Rows per row group of what is written to a workspace file (DuckDB's default is 122,880; rows
 * already written keep theirs). A load writes its events in time order, so a query whose window
 * starts or ends inside a 15-minute span reads that partial span from every load that covers it,
 * one whole row group each: smaller groups make those edges cheaper, and this size does so for
 * a file about as small as with DuckDB's default (smaller ones compress each group less well).
 * DuckDB takes it only when attaching a file, and only as a multiple of its vector size (2,048).
 */
export const ROW_GROUP_SIZE = 65_536;

/** The name the workspace file is attached under; every connection of ours starts in it. */
const WORKSPACE_DATABASE = 'workspace';

/**
 * The DuckDB configuration every workspace database is opened with: no extension installs or
 * autoloads, and (once {@link openLocked} has attached the file) no file or network access from
 * SQL. Ingest and queries need none of what it turns off. Spills go beside the file, where DuckDB
 * puts them for a database opened by path.
 */
function workspaceDbConfig(path: string, options: WorkspaceDbOptions): Record<string, string> {
  return {
    // Attaching the file needs file access; openLocked switches it off before handing it out.
    enable_external_access: 'true',
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    allow_community_extensions: 'false',
    allow_unsigned_extensions: 'false',
    memory_limit: options.memoryLimit ?? '2GB',
    threads: String(options.threads ?? 2),
    storage_compatibility_version: STORAGE_VERSION,
    temp_directory: `${path}.tmp`,
    ...(options.checkpointThreshold ? { checkpoint_threshold: options.checkpointThreshold } : {}),
  };
}

/**
 * Opens a workspace database with the lock-down that SQL mode relies on, enforced by the
 * database itself. The session zone is UTC whatever the machine's zone, so plain DuckDB calls in
 * SQL mode (`date_trunc('day', to_timestamp(ts))`) mean the same everywhere; it is set with SET
 * because ICU settings cannot travel in the create-time config. The configuration is locked
 * last, before any connection of ours exists, so no statement can loosen it afterwards.
 */
export function openWorkspaceInstance(
  path: string,
  options: WorkspaceDbOptions = {},
): Promise<WorkspaceInstance> {
  return openLocked(path, workspaceDbConfig(path, options), []);
}

/**
 * Opens a workspace database for `engine load`: the same lock-down as
 * {@link openWorkspaceInstance}, except that SQL may read the files in `readableDir`, where the
 * loader stages the events it has checked for DuckDB's CSV reader. Only the CLI opens a
 * database this way, while no engine serves it (the file lock sees to that); the directory is
 * allowed before file access is switched off, and the configuration is locked before any
 * connection of ours exists.
 */
export function openLoaderInstance(
  path: string,
  readableDir: string,
  options: WorkspaceDbOptions = {},
): Promise<WorkspaceInstance> {
  const dir = readableDir.endsWith(sep) ? readableDir : `${readableDir}${sep}`;
  return openLocked(
    path,
    {
      ...workspaceDbConfig(path, options),
      // A large insert writes each row group to the file as soon as it is full, instead of
      // buffering five or waiting for the commit: otherwise the last commit of a load
      // compresses up to four row groups alone, with the parse workers already done.
      write_buffer_row_group_count: '1',
    },
    // allowed_directories can only be set while file access is on; openLocked switches it off.
    [`SET GLOBAL allowed_directories = [${quoteLiteral(dir)}]`],
  );
}

/**
 * A workspace file another process holds open: DuckDB lets one process write a file, so a second
 * engine (or `engine load`) on the same data folder stops here with a sentence, not DuckDB's
 * lock text.
 */
export class WorkspaceInUseError extends Error {
  override name = 'WorkspaceInUseError';
  constructor(readonly file: string) {
    super(`${file} is in use by another process (is an engine serving it? stop it first)`);
  }
}

/**
 * A workspace database as {@link openWorkspaceInstance} opens it: a DuckDB instance whose only
 * database is the workspace file. DuckDB's USE lasts for one connection, so every connection
 * starts with it; the in-memory database DuckDB starts with is detached, so a statement that
 * somehow ran outside the file would fail instead of writing where nothing is kept.
 */
export class WorkspaceInstance {
  readonly #instance: DuckDBInstance;

  constructor(instance: DuckDBInstance) {
    this.#instance = instance;
  }

  /** A new connection whose unqualified names resolve in the workspace file. */
  async connect(): Promise<DuckDBConnection> {
    const conn = await this.#instance.connect();
    try {
      await conn.run(`USE ${WORKSPACE_DATABASE}`);
      return conn;
    } catch (error) {
      conn.closeSync();
      throw error;
    }
  }

  /** Closes the instance, which checkpoints the file and removes its WAL. */
  closeSync(): void {
    this.#instance.closeSync();
  }
}

/**
 * Creates the instance, attaches the workspace file with {@link ROW_GROUP_SIZE}, runs `setup`,
 * then the settings every workspace shares (no file access, UTC, then the lock) on a connection
 * that is closed before the instance is handed out.
 */
async function openLocked(
  path: string,
  config: Record<string, string>,
  setup: readonly string[],
): Promise<WorkspaceInstance> {
  const instance = await DuckDBInstance.create(':memory:', config);
  try {
    const conn = await instance.connect();
    try {
      await conn
        .run(
          `ATTACH ${quoteLiteral(path)} AS ${WORKSPACE_DATABASE} (ROW_GROUP_SIZE ${ROW_GROUP_SIZE})`,
        )
        .catch((error: Error) => {
          throw /Could not set lock/i.test(error.message) ? new WorkspaceInUseError(path) : error;
        });
      for (const statement of [
        `USE ${WORKSPACE_DATABASE}`,
        'DETACH memory',
        ...setup,
        'SET GLOBAL enable_external_access = false',
        "SET GLOBAL TimeZone = 'UTC'",
        'SET GLOBAL lock_configuration = true',
      ]) {
        await conn.run(statement);
      }
    } finally {
      conn.closeSync();
    }
    return new WorkspaceInstance(instance);
  } catch (error) {
    instance.closeSync();
    throw error;
  }
}

/**
 * The column type for a collection's payload text: zstd-compressed where the file's storage
 * format allows it. Payloads are read whole and rarely (Samples, untyped keys, SQL mode), and
 * zstd writes them in about half the CPU time of DuckDB's default dictionary and FSST choice,
 * into a file about a third smaller, which is most of what `engine load` spends compressing.
 * A file made in an older format (before v1.2.0) would silently store a zstd column
 * uncompressed, so it keeps DuckDB's default.
 */
export async function payloadColumnType(conn: DuckDBConnection): Promise<string> {
  const reader = await conn.runAndReadAll(
    `SELECT tags['storage_version'] FROM duckdb_databases() WHERE database_name = current_database()`,
  );
  const version = /^v(\d+)\.(\d+)/.exec(String(reader.getRows()[0]?.[0] ?? ''));
  const [major, minor] = [Number(version?.[1] ?? 0), Number(version?.[2] ?? 0)];
  return major > 1 || (major === 1 && minor >= 2) ? 'VARCHAR USING COMPRESSION zstd' : 'VARCHAR';
}

/** A SQL string literal (SET and ATTACH take no bound parameters): a path of our own. */
function quoteLiteral(text: string): string {
  if (text.includes('\u0000')) throw new RangeError('a path must be free of NUL characters');
  return `'${text.replaceAll("'", "''")}'`;
}
