import type { Envelope, SqlQuery } from '@analytics-chart/protocol';
import { EngineError } from '../engine-error.ts';
import type { SqlWorkspace } from './sql-workspace.ts';

export type { SqlWorkspace } from './sql-workspace.ts';

/** Options of one SQL-mode run. */
export interface SqlRunOptions {
  /** Time limit in milliseconds (default 10 000). */
  timeoutMs?: number;
  /** The current instant in Unix seconds, for `now()`. */
  now?: number;
}

/**
 * Runs a SQL-mode query against one workspace and shapes the rows into the response envelope.
 * Placeholder until SQL mode lands: it refuses every query with a clear 400.
 */
export async function runSqlQuery(
  _workspace: SqlWorkspace,
  _query: SqlQuery,
  _options: SqlRunOptions = {},
): Promise<Envelope> {
  throw new EngineError(400, 'SQL mode is not available yet');
}
