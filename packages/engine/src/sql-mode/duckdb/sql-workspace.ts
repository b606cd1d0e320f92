import type { DuckDBConnection } from '@duckdb/node-api';

/**
 * What SQL mode needs from the storage layer: a connection to one workspace's database and the
 * relations that hold its collections. `WorkspaceDb` satisfies it without importing it, so
 * storage stays below the modes and the two can change independently.
 */
export interface SqlWorkspace {
  /** Opens a connection to the workspace's database for one SQL-mode query; the caller closes it. */
  connect(): Promise<DuckDBConnection>;
  /**
   * The workspace's collections, each with a relation (schema-qualified and quoted, ready to put
   * after FROM) whose columns are `timestamp BIGINT` (Unix seconds) and `json VARCHAR` (the
   * payload text as ingested).
   */
  collections(): Promise<Array<{ name: string; relation: string }>>;
}
