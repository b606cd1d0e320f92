import { EngineError } from '../../src/engine-error.ts';
import type { SqlWorkspace } from '../../src/sql-mode/duckdb/index.ts';
import { runSqlQuery, type SqlRunOptions } from '../../src/sql-mode/duckdb/index.ts';
import { isClickHouseWorkspace } from './clickhouse-bed.ts';
import { NOW, sqlQuery } from './workspaces.ts';

/** What a client would receive: a status and a JSON body (envelope or `{error}`). */
export interface Answer {
  status: number;
  body: unknown;
}

/**
 * Runs a request body through SQL mode the way the HTTP handler does (protocol parse, then
 * `runSqlQuery`, EngineError mapped to its status) and returns what the client would see.
 */
export async function answer(
  workspace: SqlWorkspace,
  body: Record<string, unknown>,
  options: SqlRunOptions = {},
): Promise<Answer> {
  try {
    const envelope = isClickHouseWorkspace(workspace)
      ? await workspace.run(sqlQuery(body), options)
      : await runSqlQuery(workspace, sqlQuery(body), { now: NOW, ...options });
    return { status: 200, body: JSON.parse(JSON.stringify(envelope)) };
  } catch (error) {
    if (error instanceof EngineError)
      return { status: error.status, body: { error: error.message } };
    throw error;
  }
}

/** Runs a Table query and returns its rows, failing loudly on a refusal. */
export async function tableRows(
  workspace: SqlWorkspace,
  sql: string,
  extra: Record<string, unknown> = {},
  options: SqlRunOptions = {},
): Promise<Record<string, unknown>[]> {
  const { status, body } = await answer(
    workspace,
    { sql_query: sql, graph_type: 'Table', ...extra },
    options,
  );
  if (status !== 200) throw new Error(`expected 200, got ${status}: ${JSON.stringify(body)}`);
  return (body as { result: Record<string, unknown>[] }).result;
}
