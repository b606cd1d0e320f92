import { type Envelope, LIMITS } from '@analytics-chart/protocol';
import { isOutOfRange } from '../../storage/duckdb/exact-sum-sql.ts';
import type { PlainValue } from '../../storage/duckdb/prepared-statements.ts';
import type { Statement } from '../../storage/duckdb/sql-params.ts';
import type { WorkspaceDb } from '../../storage/duckdb/workspace-db.ts';
import { bindDuckDbQuery, type DuckDbBoundQuery } from '../bind/duckdb/bind-duckdb-query.ts';
import type {
  CollectionAnswer,
  CollectionPlan,
  LinePlan,
  LineWindow,
} from '../plan/collection-plan.ts';
import { WholeSumRefused } from '../plan/exact-sum.ts';
import { MAX_SPLIT_CELLS } from '../plan/split-series.ts';
import { categoriesEnvelope } from '../shape/categories-shape.ts';
import { percentileOfRanks } from '../shape/growing-percentiles.ts';
import { type LineAnswer, lineEnvelopeOf, lineWindowAnswer } from '../shape/line-shape.ts';
import {
  cutSamplesPage,
  MAX_SAMPLES_SECOND,
  type StoredSample,
  samplesAnswer,
  storedSamples,
} from '../shape/samples-shape.ts';
import { singleValueEnvelope } from '../shape/single-value-shape.ts';
import { categoriesSql } from './categories-sql.ts';
import { lineSql } from './line-sql.ts';
import type { PercentileNeighbors } from './percentile-neighbors-sql.ts';
import { samplesRangeSql, samplesSql } from './samples-sql.ts';
import { type SingleValueStatement, singleValueSql } from './single-value-sql.ts';

/**
 * The run stage: a statement's rows as plain values, under the query's time limit; none for a
 * statement a renderer did not write (nothing to read).
 */
type ReadRows = (statement: Statement | null) => Promise<PlainValue[][]>;

/** The run stage of two statements read in one snapshot, the second rendered from the first's rows. */
type ReadTwo = (
  first: Statement,
  then: (rows: PlainValue[][]) => Statement | null,
) => Promise<[PlainValue[][], PlainValue[][] | null]>;

/**
 * The collection-mode query of a DuckDB workspace, the function its driver hands the front, and
 * the one place its statements run: bind (the catalog read once), then per graph-type family
 * render (a pure file each: `line-sql.ts`, `categories-sql.ts`, `single-value-sql.ts`,
 * `samples-sql.ts`), run ({@link WorkspaceDb.readRows}) and shape (`shape/`, the same for every
 * driver). A collection with no events answers like an empty one.
 */
export function collectionQuery(
  db: WorkspaceDb,
): (plan: CollectionPlan, limits: { timeoutMs: number }) => Promise<CollectionAnswer> {
  const refused = new RefusedWholeSums();
  return async (plan, { timeoutMs }) => {
    const bound = bindDuckDbQuery(db.catalog, plan);
    const { aggregation } = plan.query;
    if (bound.metricSql === null || (aggregation !== 'Sum' && aggregation !== 'Avg')) {
      return answer(db, plan, bound, timeoutMs);
    }
    // Sums of whole values first, then of limbs where some value was not whole or out of range.
    const metric = `${bound.relation}\n${bound.metricSql}`;
    const started = performance.now();
    if (!refused.has(metric)) {
      try {
        return await answer(db, plan, { ...bound, sums: 'whole' }, timeoutMs);
      } catch (error) {
        if (!(error instanceof WholeSumRefused) && !isOutOfRange(error)) throw error;
        refused.add(metric);
      }
    }
    const left = Math.max(1, timeoutMs - (performance.now() - started));
    return answer(db, plan, { ...bound, sums: 'limbs' }, left);
  };
}

/** How long a metric whose whole sum was refused is summed by its limbs alone. */
const REFUSAL_MS = 10 * 60_000;
/** Metrics remembered at most. */
const MAX_REFUSED = 1_000;

/**
 * The metrics (a relation and a numeric form) whose whole sum was refused lately: their values
 * are summed by their limbs straight away for a while, rather than read twice on every query.
 */
class RefusedWholeSums {
  readonly #at = new Map<string, number>();

  has(metric: string, now = performance.now()): boolean {
    const at = this.#at.get(metric);
    if (at === undefined) return false;
    if (now - at < REFUSAL_MS) return true;
    this.#at.delete(metric);
    return false;
  }

  add(metric: string, now = performance.now()): void {
    this.#at.delete(metric);
    this.#at.set(metric, now);
    // The oldest refusal goes first.
    if (this.#at.size > MAX_REFUSED) this.#at.delete(this.#at.keys().next().value as string);
  }
}

/** One bound query's answer: each graph-type family's statements rendered, run and shaped. */
async function answer(
  db: WorkspaceDb,
  plan: CollectionPlan,
  bound: DuckDbBoundQuery,
  timeoutMs: number,
): Promise<CollectionAnswer> {
  // Awaited inside, so that the run returns to its stage rather than through a wrapper.
  const read: ReadRows = async (statement) =>
    statement ? await db.readRows(statement, timeoutMs) : [];
  const readTwo: ReadTwo = (first, then) => db.readRowsInSnapshot(first, then, timeoutMs);
  if (plan.line) return { envelope: await lineQuery(bound, plan.line, read, readTwo) };
  switch (plan.query.graph_type) {
    case 'Samples':
      return samplesQuery(bound, read);
    case 'Single Value': {
      const { window, compare } = bound.windows;
      const value = (statement: SingleValueStatement | null) =>
        statement?.form === 'ranks' ? readPercentile(db, statement, timeoutMs) : read(statement);
      const main = await value(singleValueSql(bound, window));
      const second = compare ? await value(singleValueSql(bound, compare)) : null;
      return { envelope: singleValueEnvelope(bound.query, main, second, plan.empty) };
    }
    default:
      return {
        envelope: categoriesEnvelope(bound.query, await read(categoriesSql(bound)), plan.empty),
      };
  }
}

/**
 * A percentile's one row from its ranks (`single-value-sql.ts`): the count of values, then the two
 * closest ranks chosen for that count, in one snapshot, interpolated by the number rule's steps;
 * null for no values.
 */
async function readPercentile(
  db: WorkspaceDb,
  statement: Extract<SingleValueStatement, { form: 'ranks' }>,
  timeoutMs: number,
): Promise<PlainValue[][]> {
  const countOf = (rows: PlainValue[][]) => Number(rows[0]?.[0] ?? 0);
  const [counted, ranked] = await db.readRowsInSnapshot(
    statement.count,
    (rows) => (countOf(rows) > 0 ? statement.ranksAt(countOf(rows)) : null),
    timeoutMs,
  );
  if (!ranked) return [[null]];
  const n = countOf(counted);
  // One snapshot: the same values both times, or the ranks would be another count's.
  if (countOf(ranked) !== n)
    throw new Error(`percentile ranks read ${countOf(ranked)} values, not ${n}`);
  const [lo, hi] = (ranked[0] as PlainValue[])[1] as [number, number];
  return [[percentileOfRanks(statement.level, n, lo, hi)]];
}

/** A line: its main window, then its compare window keeping a split line's series. */
async function lineQuery(
  bound: DuckDbBoundQuery,
  line: LinePlan,
  read: ReadRows,
  readTwo: ReadTwo,
): Promise<Envelope> {
  const main = await lineWindow(bound, line, line.main, null, read, readTwo);
  const fixed = line.kind.split ? (main[0]?.series ?? []) : null;
  const second = line.compare
    ? await lineWindow(bound, line, line.compare, fixed, read, readTwo)
    : null;
  return lineEnvelopeOf(line, main, second?.[0] ?? null);
}

/** One window of a line, rendered, run and shaped. */
async function lineWindow(
  bound: DuckDbBoundQuery,
  line: LinePlan,
  window: LineWindow,
  fixedSeries: readonly string[] | null,
  read: ReadRows,
  readTwo: ReadTwo,
): Promise<LineAnswer[]> {
  let statement = lineSql(bound, line, window, fixedSeries, false);
  let rows: readonly (readonly unknown[])[] | null = statement?.neighbors
    ? await neighborRows(statement.neighbors, readTwo)
    : null;
  rows ??= await read(statement);
  if (statement?.form === 'cells' && rows.length > MAX_SPLIT_CELLS) {
    // Too many cells to rank here: DuckDB ranks the series and returns the top ones' cells.
    statement = lineSql(bound, line, window, fixedSeries, true);
    rows = await read(statement);
  }
  const keyed = statement?.bucketKeys ? { ...window, units: undefined } : window;
  return lineWindowAnswer(bound.query, line, keyed, statement?.form ?? null, rows, fixedSeries);
}

/**
 * A percentile's rows from a value near each group's ranks and the counts around it
 * (`percentile-neighbors-sql.ts`), or null where the counts do not reach a rank or the groups
 * are too many.
 */
async function neighborRows(
  neighbors: PercentileNeighbors,
  readTwo: ReadTwo,
): Promise<readonly (readonly unknown[])[] | null> {
  const [first, around] = await readTwo(neighbors.first, (rows) => neighbors.around(rows));
  return neighbors.rows(first, around);
}

/**
 * Samples: the narrowest range holding more than a page (the whole window at the last), cut
 * at a whole second, or that second alone where it fills the page.
 */
async function samplesQuery(bound: DuckDbBoundQuery, read: ReadRows): Promise<CollectionAnswer> {
  let rows: StoredSample[] = [];
  for (const statement of samplesSql(bound)) {
    rows = storedSamples(await read(statement));
    if (rows.length > LIMITS.samples) break;
  }
  const page = cutSamplesPage(rows);
  if ('rows' in page) return samplesAnswer(page.rows);
  const second = samplesRangeSql(bound, page.wholeSecond, page.wholeSecond, MAX_SAMPLES_SECOND);
  return samplesAnswer(storedSamples(await read(second)));
}
