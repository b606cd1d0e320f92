import type { WorkspaceDb } from '../../storage/duckdb/workspace-db.ts';
import { bindDuckDbQuery } from '../bind/duckdb/bind-duckdb-query.ts';
import type { CollectionAnswer, CollectionPlan } from '../plan/collection-plan.ts';
import { categoriesEnvelope } from './categories.ts';
import type { QueryContext } from './collection-relation.ts';
import { samplesAnswer } from './samples.ts';
import { singleValueEnvelope } from './single-value.ts';
import { timeSeriesEnvelope } from './time-series.ts';

/**
 * The collection-mode query of a DuckDB workspace, the function its driver hands the front:
 * bind (the catalog read once), then each graph-type family, a file of its own, renders, runs
 * (through {@link WorkspaceDb.reader}) and shapes. A collection with no events answers like
 * an empty one.
 */
export function collectionQuery(
  db: WorkspaceDb,
): (plan: CollectionPlan, limits: { timeoutMs: number }) => Promise<CollectionAnswer> {
  return async (plan, limits) => {
    const { query, windows } = plan;
    const ctx: QueryContext = {
      query,
      windows,
      bound: bindDuckDbQuery(db.catalog, plan),
      run: (statement) => db.readRows(statement, limits.timeoutMs),
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
  };
}
