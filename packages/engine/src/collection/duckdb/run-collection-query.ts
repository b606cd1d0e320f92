import type { Envelope } from '@analytics-chart/protocol';
import type { Statement } from '../../storage/duckdb/sql-params.ts';
import type { WorkspaceDb } from '../../storage/duckdb/workspace-db.ts';
import { bindDuckDbQuery, type DuckDbBoundQuery } from '../bind/duckdb/bind-duckdb-query.ts';
import type {
  CollectionAnswer,
  CollectionPlan,
  LinePlan,
  LineWindow,
} from '../plan/collection-plan.ts';
import { MAX_SPLIT_CELLS } from '../plan/split-series.ts';
import { type LineAnswer, lineEnvelopeOf, lineWindowAnswer } from '../shape/line-shape.ts';
import { categoriesEnvelope } from './categories.ts';
import type { QueryContext, RunStatement } from './collection-relation.ts';
import { lineSql } from './line-sql.ts';
import { samplesAnswer } from './samples.ts';
import { singleValueEnvelope } from './single-value.ts';

/**
 * The collection-mode query of a DuckDB workspace, the function its driver hands the front:
 * bind (the catalog read once), then, per window of a line, render (`line-sql.ts`), run
 * ({@link WorkspaceDb.readRows}) and shape (`shape/line-shape.ts`); the other graph-type
 * families, a file each, render, run and shape in turn. A collection with no events answers
 * like an empty one.
 */
export function collectionQuery(
  db: WorkspaceDb,
): (plan: CollectionPlan, limits: { timeoutMs: number }) => Promise<CollectionAnswer> {
  return async (plan, limits) => {
    const bound = bindDuckDbQuery(db.catalog, plan);
    if (plan.line) return { envelope: await lineQuery(bound, plan.line, db, limits.timeoutMs) };
    const run: RunStatement = (statement: Statement) => db.readRows(statement, limits.timeoutMs);
    const ctx: QueryContext = { query: plan.query, windows: plan.windows, bound, run };
    switch (plan.query.graph_type) {
      case 'Samples':
        return samplesAnswer(ctx);
      case 'Single Value':
        return { envelope: await singleValueEnvelope(ctx) };
      default:
        return { envelope: await categoriesEnvelope(ctx) };
    }
  };
}

/** A line: its main window, then its compare window keeping a split line's series. */
async function lineQuery(
  bound: DuckDbBoundQuery,
  line: LinePlan,
  db: WorkspaceDb,
  timeoutMs: number,
): Promise<Envelope> {
  const main = await lineWindow(bound, line, line.main, null, db, timeoutMs);
  const fixed = line.kind.split ? (main[0]?.series ?? []) : null;
  const second = line.compare
    ? await lineWindow(bound, line, line.compare, fixed, db, timeoutMs)
    : null;
  return lineEnvelopeOf(line, main, second?.[0] ?? null);
}

/** One window of a line, rendered, run and shaped. */
async function lineWindow(
  bound: DuckDbBoundQuery,
  line: LinePlan,
  window: LineWindow,
  fixedSeries: readonly string[] | null,
  db: WorkspaceDb,
  timeoutMs: number,
): Promise<LineAnswer[]> {
  const statement = lineSql(bound, line, window, fixedSeries, false);
  let form = statement?.form ?? null;
  let rows = statement ? await db.readRows(statement, timeoutMs) : [];
  if (form === 'cells' && rows.length > MAX_SPLIT_CELLS) {
    // Too many cells to rank here: DuckDB ranks the series and returns the top ones' cells.
    const ranked = lineSql(bound, line, window, fixedSeries, true);
    form = 'ranked';
    rows = ranked ? await db.readRows(ranked, timeoutMs) : [];
  }
  return lineWindowAnswer(bound.query, line, window, form, rows, fixedSeries);
}
