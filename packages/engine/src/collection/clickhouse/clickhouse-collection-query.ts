import type { CollectionQuery } from '@analytics-chart/protocol';
import { EngineError } from '../../engine-error.ts';
import type { ClickHouseRun } from '../../storage/clickhouse/clickhouse-run.ts';
import { bindClickHouseQuery } from '../bind/clickhouse/bind-clickhouse-query.ts';
import type { CollectionAnswer, CollectionPlan } from '../plan/collection-plan.ts';
import { clickHouseCategories } from './clickhouse-categories.ts';
import { clickHouseSamples } from './clickhouse-samples.ts';
import { clickHouseSingleValue } from './clickhouse-single-value.ts';
import { clickHouseTimeSeries } from './clickhouse-time-series.ts';

/**
 * Collection-mode queries compiled to ClickHouse SQL. Every value from the request travels as a
 * bound query parameter (`{name:Type}`); the SQL text is fixed per query shape. Buckets are
 * keyed from the engine's own zone offsets and matched against the engine's bucket plan
 * (`planBuckets`), which supplies the labels and the empty buckets: a key ClickHouse computes
 * that the plan does not know is an error, never a dropped event. Each graph-type family is a
 * file of its own.
 */

/** Answers a planned collection-mode query on ClickHouse, or refuses what is not compiled yet (501). */
export async function runClickHouseCollectionQuery(
  plan: CollectionPlan,
  run: ClickHouseRun,
): Promise<CollectionAnswer> {
  const { query, windows } = plan;
  refuseUncompiled(query);
  // Bind reads the key columns; the renderers get the bound query and a run without them.
  const { columns, ...rest } = run;
  const bound = bindClickHouseQuery(plan, columns, run.database);
  const { window } = windows;
  switch (query.graph_type) {
    case 'Samples':
      return clickHouseSamples(bound, window, rest);
    case 'Table':
    case 'Bar Chart':
    case 'Pie Chart':
      return { envelope: await clickHouseCategories(bound, window, rest) };
    case 'Single Value':
      return { envelope: await clickHouseSingleValue(bound, rest) };
    default:
      if (!plan.line) throw new Error(`'${query.graph_type}' has no line plan`);
      return { envelope: await clickHouseTimeSeries(bound, plan.line, rest) };
  }
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
