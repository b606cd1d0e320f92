import { type CollectionQuery, type Envelope, resolveWindows } from '@analytics-chart/protocol';
import { EngineError } from '../../engine-error.ts';
import type { WorkspaceDb } from '../../storage/duckdb/workspace-db.ts';
import { categoriesEnvelope } from './categories.ts';
import type { QueryContext } from './query-context.ts';
import { samplesEnvelope } from './samples.ts';
import { singleValueEnvelope } from './single-value.ts';
import { timeSeriesEnvelope } from './time-series.ts';

/**
 * Answers a collection-mode query: resolves its windows in the request's zone against `now`
 * (Unix seconds), then plans and runs it against the workspace. A collection with no events
 * answers like an empty one.
 */
export async function runCollectionQuery(
  db: WorkspaceDb,
  query: CollectionQuery,
  now: number,
  timeoutMs: number,
): Promise<Envelope> {
  const windows = resolveWindows(query, now);
  if (!windows.ok) throw new EngineError(400, windows.error);
  const ctx: QueryContext = {
    db,
    query,
    windows: windows.value,
    entry: db.catalog.get(query.collection),
    timeoutMs,
  };
  switch (query.graph_type) {
    case 'Samples':
      return samplesEnvelope(ctx);
    case 'Single Value':
      return singleValueEnvelope(ctx);
    case 'Table':
    case 'Bar Chart':
    case 'Pie Chart':
      return categoriesEnvelope(ctx);
    default:
      return timeSeriesEnvelope(ctx);
  }
}
