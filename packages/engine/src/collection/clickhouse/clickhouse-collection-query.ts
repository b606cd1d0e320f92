import type { CollectionQuery } from '@analytics-chart/protocol';
import { EngineError } from '../../engine-error.ts';
import type { ClickHouseRun } from '../../storage/clickhouse/clickhouse-run.ts';
import {
  bindClickHouseQuery,
  type ClickHouseBoundQuery,
} from '../bind/clickhouse/bind-clickhouse-query.ts';
import type { CollectionAnswer, CollectionPlan } from '../plan/collection-plan.ts';
import { categoriesEnvelope } from '../shape/categories-shape.ts';
import {
  cutSamplesPage,
  MAX_SAMPLES_SECOND,
  samplesAnswer,
  storedSamples,
} from '../shape/samples-shape.ts';
import { singleValueEnvelope } from '../shape/single-value-shape.ts';
import { categoriesSql } from './categories-sql.ts';
import { readRows } from './clickhouse-events.ts';
import type { ClickHouseStatement } from './clickhouse-statement.ts';
import { clickHouseTimeSeries } from './clickhouse-time-series.ts';
import { samplesRangeSql, samplesSql } from './samples-sql.ts';
import { singleValueSql } from './single-value-sql.ts';

/**
 * Collection-mode queries compiled to ClickHouse SQL. Every value from the request travels as a
 * bound query parameter (`{name:Type}`); the SQL text is fixed per query shape. Buckets are
 * keyed from the engine's own zone offsets and matched against the engine's bucket plan
 * (`planBuckets`), which supplies the labels and the empty buckets: a key ClickHouse computes
 * that the plan does not know is an error, never a dropped event. The stages: bind (the key
 * columns read once), then per graph-type family render (a pure file each: `line-sql.ts`,
 * `categories-sql.ts`, `single-value-sql.ts`, `samples-sql.ts`), run ({@link readRows}) and
 * shape (`shape/`, the same for every driver).
 */

/** The run stage: a statement's rows as plain values; none for a statement a renderer did not write. */
type ReadRows = (statement: ClickHouseStatement | null) => Promise<unknown[][]>;

/** Answers a planned collection-mode query on ClickHouse, or refuses what is not compiled yet (501). */
export async function runClickHouseCollectionQuery(
  plan: CollectionPlan,
  run: ClickHouseRun,
): Promise<CollectionAnswer> {
  const { query, windows } = plan;
  refuseUncompiled(query);
  // Bind reads the key columns and rollups; the renderers get the bound query and a run without them.
  const { columns, rollups, ...rest } = run;
  const bound = bindClickHouseQuery(plan, columns, run.database, rollups);
  // Awaited inside, so that the run returns to its stage rather than through a wrapper.
  const read: ReadRows = async (statement) => (statement ? await readRows(rest, statement) : []);
  switch (query.graph_type) {
    case 'Samples':
      return samplesQuery(bound, read);
    case 'Table':
    case 'Bar Chart':
    case 'Pie Chart':
      return { envelope: categoriesEnvelope(query, await read(categoriesSql(bound)), plan.empty) };
    case 'Single Value': {
      const main = await read(singleValueSql(bound, windows.window));
      const second = windows.compare ? await read(singleValueSql(bound, windows.compare)) : null;
      return { envelope: singleValueEnvelope(query, main, second, plan.empty) };
    }
    default:
      if (!plan.line) throw new Error(`'${query.graph_type}' has no line plan`);
      return { envelope: await clickHouseTimeSeries(bound, plan.line, rest) };
  }
}

/**
 * Samples: the first page of the window cut at a whole second, or that second alone where it
 * fills the page.
 */
async function samplesQuery(
  bound: ClickHouseBoundQuery,
  read: ReadRows,
): Promise<CollectionAnswer> {
  const page = cutSamplesPage(storedSamples(await read(samplesSql(bound))));
  if ('rows' in page) return samplesAnswer(page.rows);
  const second = samplesRangeSql(bound, page.wholeSecond, page.wholeSecond, MAX_SAMPLES_SECOND);
  return samplesAnswer(storedSamples(await read(second)));
}

const COMPILED = new Set([
  'Samples',
  'Single Value',
  'Single Line',
  'Cumulative Line',
  'Compare Line',
  'Ratio Line',
  'Multi Line',
  'Stacked Line',
  'Table',
  'Bar Chart',
  'Pie Chart',
]);

function refuseUncompiled(query: CollectionQuery): void {
  if (!COMPILED.has(query.graph_type)) {
    throw new EngineError(
      501,
      `collection mode on ClickHouse does not answer graph type '${query.graph_type}' yet (it answers ${[...COMPILED].join(', ')})`,
    );
  }
}
