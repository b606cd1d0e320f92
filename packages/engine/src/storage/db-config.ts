import { DuckDBInstance } from '@duckdb/node-api';

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
 * The DuckDB configuration every workspace database is opened with: no file or network access
 * from SQL, no extension installs or autoloads. Ingest and queries need none of what it turns
 * off. {@link openWorkspaceInstance} adds the session zone and then locks it all.
 */
function workspaceDbConfig(options: WorkspaceDbOptions): Record<string, string> {
  return {
    enable_external_access: 'false',
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    allow_community_extensions: 'false',
    allow_unsigned_extensions: 'false',
    memory_limit: options.memoryLimit ?? '2GB',
    threads: String(options.threads ?? 2),
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
export async function openWorkspaceInstance(
  path: string,
  options: WorkspaceDbOptions = {},
): Promise<DuckDBInstance> {
  const instance = await DuckDBInstance.create(path, workspaceDbConfig(options));
  try {
    const setup = await instance.connect();
    try {
      await setup.run("SET GLOBAL TimeZone = 'UTC'");
      await setup.run('SET GLOBAL lock_configuration = true');
    } finally {
      setup.closeSync();
    }
    return instance;
  } catch (error) {
    instance.closeSync();
    throw error;
  }
}
