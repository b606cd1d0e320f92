import { readPrepared } from '../../storage/duckdb/prepared-statements.ts';
import type { WorkspaceDb } from '../../storage/duckdb/workspace-db.ts';
import { bindDuckDbQuery } from '../bind/duckdb/bind-duckdb-query.ts';
import type { CollectionAnswer, CollectionPlan } from '../plan/collection-plan.ts';
import { categoriesEnvelope } from './categories.ts';
import type { QueryContext } from './collection-relation.ts';
import { samplesAnswer } from './samples.ts';
import { singleValueEnvelope } from './single-value.ts';
import { timeSeriesEnvelope } from './time-series.ts';

/**
 * Answers a planned collection-mode query on a DuckDB workspace: bind (the catalog read once),
 * then each graph-type family, a file of its own, renders, runs and shapes. A collection with
 * no events answers like an empty one.
 */
export async function runCollectionQuery(
  db: WorkspaceDb,
  plan: CollectionPlan,
  timeoutMs: number,
): Promise<CollectionAnswer> {
  const { query, windows } = plan;
  const ctx: QueryContext = {
    query,
    windows,
    bound: bindDuckDbQuery(db.catalog, plan),
    run: (sql, params) => db.read((conn) => readPrepared(conn, sql, params), timeoutMs),
  };
  switch (query.graph_type) {
    case 'Samples':
      return samplesAnswer(ctx);
    case 'Single Value':
      return { envelope: await singleValueEnvelope(ctx) };
    case 'Table':
    case 'Bar Chart':
    case 'Pie Chart':
      return { envelope: await categoriesEnvelope(ctx) };
    default:
      return { envelope: await timeSeriesEnvelope(ctx) };
  }
}
