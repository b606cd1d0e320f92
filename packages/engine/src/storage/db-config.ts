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
 * The DuckDB configuration every workspace database is opened with. It is the lock-down that SQL
 * mode relies on, enforced by the database itself: no file or network access from SQL, no
 * extension installs or autoloads, and a configuration that no statement can change afterwards.
 * Ingest and queries need none of what it turns off.
 */
export function workspaceDbConfig(options: WorkspaceDbOptions = {}): Record<string, string> {
  return {
    enable_external_access: 'false',
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    allow_community_extensions: 'false',
    allow_unsigned_extensions: 'false',
    memory_limit: options.memoryLimit ?? '2GB',
    threads: String(options.threads ?? 2),
    ...(options.checkpointThreshold ? { checkpoint_threshold: options.checkpointThreshold } : {}),
    // Last, so nothing after it can loosen the settings above.
    lock_configuration: 'true',
  };
}
