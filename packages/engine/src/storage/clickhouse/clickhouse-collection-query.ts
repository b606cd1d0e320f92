import {
  type Aggregation,
  andFilters,
  type CollectionQuery,
  type Envelope,
  LIMITS,
  pickGranularity,
  type ResolvedGranularity,
  resolveWindows,
  type SampleRow,
  type TimeWindow,
  valueKey,
} from '@analytics-chart/protocol';
import { EngineError } from '../../engine-error.ts';
import { withRawPayloads } from '../../query/samples.ts';
import { offsetSegments, planBuckets, windowSeconds } from '../../query/time-buckets.ts';
import { setSeriesValue } from '../../set-own.ts';
import { filtersSql, numericFieldSql, stringFieldSql } from './clickhouse-fields.ts';
import { ClickHouseParams } from './clickhouse-params.ts';
import { type ClickHouseRun, clickHouseSettings } from './clickhouse-run.ts';
import { EVENTS_TABLE, quoteClickHouseIdentifier } from './clickhouse-schema.ts';

/**
 * Collection-mode queries compiled to ClickHouse SQL. Every value from the request travels as a
 * bound query parameter (`{name:Type}`); the SQL text is fixed per query shape. Buckets are
 * keyed by ClickHouse's own time-zone functions and matched against the engine's bucket plan
 * (`planBuckets`), which supplies the labels and the empty buckets: a key ClickHouse computes
 * that the plan does not know is an error, never a dropped event.
 */

/** The most rows one Samples answer carries when a single second holds more than a page. */
const MAX_SAMPLES_SECOND = 10_000;

/** The seconds ClickHouse's DateTime64 can represent (1900-01-01 to 2299-12-31), in which it buckets. */
const FIRST_SECOND = -2_208_988_800;
const LAST_SECOND = 10_413_791_999;

const QUANTILE: Partial<Record<Aggregation, number>> = {
  P50: 0.5,
  P75: 0.75,
  P90: 0.9,
  P95: 0.95,
  P99: 0.99,
};

/** Answers a collection-mode query on ClickHouse, or refuses what is not compiled yet (501). */
export async function runClickHouseCollectionQuery(
  query: CollectionQuery,
  run: ClickHouseRun,
): Promise<Envelope> {
  const windows = resolveWindows(query, run.now);
  if (!windows.ok) throw new EngineError(400, windows.error);
  refuseUncompiled(query);
  const { window, compare } = windows.value;
  switch (query.graph_type) {
    case 'Samples':
      return samples(query, window, run);
    case 'Table':
    case 'Bar Chart':
    case 'Pie Chart':
      return categories(query, window, run);
    case 'Single Value': {
      const key = valueKey(query.aggregation, query.metric);
      const one = async (w: TimeWindow) => [
        { [key]: (await aggregateWindow(query, w, run)).value },
      ];
      const envelope: Envelope = { result: await one(window), metadata: {} };
      if (compare) envelope.compare_result = await one(compare);
      return envelope;
    }
    default: {
      const granularity = pickGranularity(query.granularity, window);
      const split = query.graph_type === 'Multi Line' || query.graph_type === 'Stacked Line';
      const line = (w: TimeWindow) =>
        query.graph_type === 'Ratio Line'
          ? ratioLine(query, w, granularity, run)
          : singleLine(query, w, granularity, run);
      const main = split
        ? await splitLines(query, window, granularity, run, null)
        : await line(window);
      const envelope: Envelope = {
        result: main.rows,
        metadata: { granularity, combined: main.combined },
      };
      if (main.series) envelope.metadata.series = main.series;
      if (query.graph_type === 'Compare Line') {
        // The second line: the same query with compare_filters added to the filters.
        const filters = andFilters(query.filters, query.compare_filters ?? []);
        const other = await singleLine({ ...query, filters }, window, granularity, run);
        envelope.compare_result = other.rows;
        envelope.metadata.compare_combined = other.combined;
      } else if (compare) {
        // The compare window keeps the main window's series, in the same order.
        const other = split
          ? await splitLines(query, compare, granularity, run, main.series ?? [])
          : await line(compare);
        envelope.compare_result = other.rows;
        envelope.metadata.compare_combined = other.combined;
      }
      return envelope;
    }
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

function source(run: ClickHouseRun): string {
  return `${quoteClickHouseIdentifier(run.database)}.${quoteClickHouseIdentifier(EVENTS_TABLE)}`;
}

function inWindow(
  query: CollectionQuery,
  lo: number,
  hi: number,
  params: ClickHouseParams,
): string {
  return `collection = ${params.add('String', query.collection)}
    AND timestamp BETWEEN ${params.add('Int64', lo)} AND ${params.add('Int64', hi)}
    AND ${filtersSql(query.filters, params)}`;
}

async function rowsOf<T>(run: ClickHouseRun, sql: string, params: ClickHouseParams): Promise<T[]> {
  const result = await run.client.query({
    query: sql,
    format: 'JSONEachRow',
    query_params: params.values,
    clickhouse_settings: {
      ...clickHouseSettings(run),
      output_format_json_quote_64bit_integers: 0,
      output_format_json_quote_denormals: 0,
    },
  });
  return result.json<T>();
}

/** The aggregate over `m` (NULL where the field has no number), and how an empty set reads. */
function aggregateSql(
  aggregation: Aggregation,
  m: string,
  params: ClickHouseParams,
  condition?: string,
): string {
  // The -If combinators aggregate only the rows where `condition` holds.
  const only = condition === undefined ? '' : 'If';
  const and = condition === undefined ? '' : `, ${condition}`;
  if (aggregation === 'Count') return `toFloat64(count${only}(${condition ?? ''}))`;
  if (aggregation === 'Sum') return `sumOrNull${only}(${m}${and})`;
  if (aggregation === 'Avg') return `avgOrNull${only}(${m}${and})`;
  const p = params.add('Float64', QUANTILE[aggregation]);
  // quantileExactInclusive interpolates between closest ranks: DuckDB's quantile_cont.
  return `if(count${only}(${m}${and}) = 0, NULL, quantileExactInclusive${only}(${p})(${m}${and}))`;
}

function emptyValue(aggregation: Aggregation): number | null {
  return aggregation === 'Count' || aggregation === 'Sum' ? 0 : null;
}

/** The aggregate over a window; over the events that have the split field when `withSplit`. */
async function aggregateWindow(
  query: CollectionQuery,
  window: TimeWindow,
  run: ClickHouseRun,
  withSplit = false,
): Promise<{ value: number | null }> {
  const empty = emptyValue(query.aggregation);
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return { value: empty };
  const params = new ClickHouseParams();
  const m = query.metric === null ? 'NULL' : numericFieldSql(query.metric, params);
  const split = withSplit ? ` AND ${stringFieldSql(query.split ?? '', params)} IS NOT NULL` : '';
  const rows = await rowsOf<{ v: number | null }>(
    run,
    `SELECT ${aggregateSql(query.aggregation, m, params)} AS v FROM ${source(run)}
     WHERE ${inWindow(query, lo, hi, params)}${split}`,
    params,
  );
  return { value: rows[0]?.v ?? empty };
}

/** The window's UTC offsets as SQL: the one that holds at each row's `timestamp`. */
function offsetSql(
  segments: readonly { from: number; offset: number }[],
  params: ClickHouseParams,
): string {
  if (segments.length === 1) return params.add('Int64', segments[0]?.offset ?? 0);
  return `multiIf(${segments
    .slice(1)
    .map(
      (s, i) =>
        `timestamp < ${params.add('Int64', s.from)}, ${params.add('Int64', segments[i]?.offset ?? 0)}`,
    )
    .join(', ')}, ${params.add('Int64', segments[segments.length - 1]?.offset ?? 0)})`;
}

/**
 * The bucket key of `timestamp`, as `planBuckets` numbers buckets, from the engine's own
 * offsets of the zone in the window (Temporal's tz data, as on DuckDB) rather than ClickHouse's
 * time-zone tables, which put a second on the wrong date where a clock was set back across
 * midnight (America/Goose_Bay's 00:01 changes of 1987 to 1991).
 */
function keySql(plan: ClickHousePlan, params: ClickHouseParams): string {
  switch (plan.granularity) {
    case 'Minute':
    case 'Hour': {
      // Each pass of the zone's clock through a minute or hour is one bucket, whatever the size
      // of an offset change; the plan's clock gives each offset's shift.
      const clock = plan.clock;
      if (!clock) throw new Error('a Minute or Hour plan without its clock');
      return `intDiv(toInt64(timestamp) + ${offsetSql(clock.segments, params)}, ${params.add('Int64', clock.width)})`;
    }
    case 'Day':
    case 'Week':
    case 'Month': {
      // The zone's date as days since 1970-01-01 (floor: wall clocks before 1970 are negative).
      const day = `toInt64(floor((toInt64(timestamp) + ${offsetSql(plan.offsets, params)}) / 86400))`;
      if (plan.granularity === 'Day') return day;
      // Monday weeks numbered as the plan does: day d is in week floor((d + 3) / 7).
      if (plan.granularity === 'Week') return `toInt64(floor((${day} + 3) / 7))`;
      const date = `toDate32(${day})`;
      return `toInt64(toYear(${date})) * 12 + toMonth(${date}) - 1`;
    }
  }
}

type TimeRow = Record<string, string | number | null>;

/**
 * The engine's bucket plan for the window, refused (501) outside the range ClickHouse buckets
 * (DateTime64: 1900 to 2299), with the set of its keys.
 */
function bucketPlan(granularity: ResolvedGranularity, zone: string, lo: number, hi: number) {
  if (lo < FIRST_SECOND || hi > LAST_SECOND) {
    throw new EngineError(
      501,
      'time series on ClickHouse cover 1900 to 2299 (the range of its DateTime64); choose a window within it',
    );
  }
  const plan = planBuckets(granularity, zone, lo, hi);
  return {
    ...plan,
    known: new Set(plan.buckets.map((b) => b.key)),
    offsets: offsetSegments(zone, lo, hi),
  };
}

type ClickHousePlan = ReturnType<typeof bucketPlan>;

/**
 * Single Line (and Compare Line's two lines): the aggregate per bucket. Cumulative Line: the
 * aggregate over every event up to the end of each bucket, from per-bucket sums and counts
 * (percentiles are not cumulated yet: a 501 before this runs).
 */
async function singleLine(
  query: CollectionQuery,
  window: TimeWindow,
  granularity: ResolvedGranularity,
  run: ClickHouseRun,
): Promise<{ rows: TimeRow[]; combined: number | null; series?: string[] }> {
  const key = valueKey(query.aggregation, query.metric);
  const empty = emptyValue(query.aggregation);
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return { rows: [], combined: empty };
  const plan = bucketPlan(granularity, query.IANA_time_zone, lo, hi);
  const params = new ClickHouseParams();
  const m = query.metric === null ? 'NULL' : numericFieldSql(query.metric, params);
  const where = inWindow(query, lo, hi, params);
  const k = keySql(plan, params);
  const bucketRows = rowsOf<{
    k: number;
    n: number;
    v: number | null;
    s: number | null;
    c: number;
  }>(
    run,
    `SELECT ${k} AS k, count() AS n, ${aggregateSql(query.aggregation, m, params)} AS v,
       sumOrNull(${m}) AS s, count(${m}) AS c
     FROM ${source(run)} WHERE ${where} GROUP BY k`,
    params,
  );
  const additive = query.aggregation === 'Count' || query.aggregation === 'Sum';
  const cumulative = query.graph_type === 'Cumulative Line';
  const [found, total, growing] = await Promise.all([
    bucketRows,
    additive ? undefined : aggregateWindow(query, window, run),
    cumulative && QUANTILE[query.aggregation] !== undefined
      ? growingQuantiles(query, lo, hi, plan, run)
      : undefined,
  ]);
  const byKey = new Map(found.map((r) => [r.k, r]));
  for (const r of found) {
    if (!plan.known.has(r.k))
      throw new Error(`ClickHouse bucket key ${r.k} is not in the bucket plan`);
  }
  const hide = query.customizations.hideMissing === true;
  const rows: TimeRow[] = [];
  let sum = 0;
  let runningSum = 0;
  let runningCount = 0;
  let quantile: number | null = null;
  for (const bucket of plan.buckets) {
    const row = byKey.get(bucket.key);
    const value = row ? (row.v ?? empty) : empty;
    sum += value ?? 0;
    runningSum += row?.s ?? 0;
    runningCount += row?.c ?? 0;
    if (hide && !row) continue;
    let shown = value;
    if (growing) {
      if (row) quantile = growing.get(bucket.key) ?? quantile;
      shown = quantile;
    } else if (cumulative) {
      if (additive) shown = sum;
      else shown = runningCount === 0 ? null : runningSum / runningCount;
    }
    rows.push({ timestamp: bucket.label, [key]: shown });
  }
  return { rows, combined: additive ? sum : (total?.value ?? null) };
}

/**
 * A Cumulative Line's percentile per bucket: over every event from the window's start to the
 * bucket's end, as a window function over the growing frame (the DuckDB driver's definition).
 */
async function growingQuantiles(
  query: CollectionQuery,
  lo: number,
  hi: number,
  plan: ClickHousePlan,
  run: ClickHouseRun,
): Promise<Map<number, number | null>> {
  const params = new ClickHouseParams();
  const k = keySql(plan, params);
  const m = numericFieldSql(query.metric ?? '', params);
  const p = params.add('Float64', QUANTILE[query.aggregation]);
  const found = await rowsOf<{ k: number; q: number | null }>(
    run,
    `SELECT k, max(q) AS q FROM (
       SELECT k, quantileExactInclusive(${p})(m) OVER (ORDER BY k RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS q
       FROM (SELECT ${k} AS k, ${m} AS m FROM ${source(run)} WHERE ${inWindow(query, lo, hi, params)})
     ) GROUP BY k`,
    params,
  );
  return new Map(found.map((r) => [r.k, r.q]));
}

/**
 * Samples as the DuckDB driver answers them: newest first (or oldest with `Ascending`), 50 at
 * most, in ingest order within a second, and a page never ends inside a second.
 */
async function samples(
  query: CollectionQuery,
  window: TimeWindow,
  run: ClickHouseRun,
): Promise<Envelope> {
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return { result: [], metadata: {} };
  const direction = query.order === 'Ascending' ? 'ASC' : 'DESC';
  const page = (from: number, to: number, limit: number) => {
    const params = new ClickHouseParams();
    return rowsOf<{ timestamp: number; json: string }>(
      run,
      `SELECT timestamp, json FROM ${source(run)}
       WHERE ${inWindow(query, from, to, params)}
       ORDER BY timestamp ${direction}, seq ${direction} LIMIT ${params.add('UInt32', limit)}`,
      params,
    );
  };
  let rows = await page(lo, hi, LIMITS.samples + 1);
  if (rows.length > LIMITS.samples) {
    const lastKept = rows[LIMITS.samples - 1]?.timestamp;
    const firstDropped = rows[LIMITS.samples]?.timestamp;
    rows = rows.slice(0, LIMITS.samples);
    if (lastKept !== undefined && lastKept === firstDropped) {
      const whole = rows.filter((row) => row.timestamp !== lastKept);
      rows = whole.length > 0 ? whole : await page(lastKept, lastKept, MAX_SAMPLES_SECOND);
    }
  }
  const result: SampleRow[] = rows.map((r) => ({
    timestamp: r.timestamp,
    json: JSON.parse(r.json) as Record<string, unknown>,
  }));
  return withRawPayloads(
    { result, metadata: {} },
    rows.map((r) => r.json),
  );
}

const CAPS = { Table: LIMITS.table, 'Bar Chart': LIMITS.bar, 'Pie Chart': LIMITS.pie } as const;

/**
 * Table, Bar Chart and Pie Chart: one row per string form of the split field, largest value
 * first (an empty Count or Sum reads 0; other empty values are null and last), ties by name,
 * capped at 2,000 / 50 / 10 rows. Events without the split field are left out.
 */
async function categories(
  query: CollectionQuery,
  window: TimeWindow,
  run: ClickHouseRun,
): Promise<Envelope> {
  const splitField = query.split ?? '';
  const key = valueKey(query.aggregation, query.metric);
  const cap = CAPS[query.graph_type as keyof typeof CAPS] ?? LIMITS.table;
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return { result: [], metadata: {} };
  const rows = await rankSplit(query, lo, hi, run, cap);
  const empty = emptyValue(query.aggregation);
  return {
    result: rows.map((r) => ({ [splitField]: r.sp, [key]: r.v ?? empty })),
    metadata: {},
  };
}

/**
 * The split field's string forms in the window with their aggregate, largest first (an empty
 * Count or Sum reads 0; other empty values are null and last), ties by name, at most `cap`.
 */
async function rankSplit(
  query: CollectionQuery,
  lo: number,
  hi: number,
  run: ClickHouseRun,
  cap: number,
): Promise<Array<{ sp: string; v: number | null }>> {
  const params = new ClickHouseParams();
  const split = stringFieldSql(query.split ?? '', params);
  const m = query.metric === null ? 'NULL' : numericFieldSql(query.metric, params);
  const value = aggregateSql(query.aggregation, m, params);
  const ordered = emptyValue(query.aggregation) === null ? value : `coalesce(${value}, 0)`;
  return rowsOf<{ sp: string; v: number | null }>(
    run,
    `SELECT sp, v FROM (
       SELECT ${split} AS sp, ${ordered} AS v FROM ${source(run)}
       WHERE ${inWindow(query, lo, hi, params)} AND sp IS NOT NULL
       GROUP BY sp
     ) ORDER BY v DESC NULLS LAST, sp LIMIT ${params.add('UInt32', cap)}`,
    params,
  );
}

/**
 * Multi Line and Stacked Line: wide rows `{timestamp, <series>…}` for the 10 series with the
 * largest value over the window (or the given ones, for the compare window), every bucket of
 * the plan; `combined` is the aggregate over all events that have the split field.
 */
async function splitLines(
  query: CollectionQuery,
  window: TimeWindow,
  granularity: ResolvedGranularity,
  run: ClickHouseRun,
  fixedSeries: string[] | null,
): Promise<{ rows: TimeRow[]; combined: number | null; series: string[] }> {
  const empty = emptyValue(query.aggregation);
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return { rows: [], combined: empty, series: fixedSeries ?? [] };
  const plan = bucketPlan(granularity, query.IANA_time_zone, lo, hi);
  const series =
    fixedSeries ?? (await rankSplit(query, lo, hi, run, LIMITS.series)).map((r) => r.sp);
  const params = new ClickHouseParams();
  const split = stringFieldSql(query.split ?? '', params);
  const m = query.metric === null ? 'NULL' : numericFieldSql(query.metric, params);
  const [found, total] = await Promise.all([
    rowsOf<{ k: number; sp: string; v: number | null }>(
      run,
      `SELECT ${keySql(plan, params)} AS k, ${split} AS sp,
         ${aggregateSql(query.aggregation, m, params)} AS v
       FROM ${source(run)}
       WHERE ${inWindow(query, lo, hi, params)} AND sp IN ${params.add('Array(String)', series)}
       GROUP BY k, sp`,
      params,
    ),
    aggregateWindow(query, window, run, true),
  ]);
  const byKey = new Map<number, Map<string, number | null>>();
  for (const r of found) {
    if (!plan.known.has(r.k))
      throw new Error(`ClickHouse bucket key ${r.k} is not in the bucket plan`);
    const cell = byKey.get(r.k) ?? new Map<string, number | null>();
    cell.set(r.sp, r.v);
    byKey.set(r.k, cell);
  }
  const hide = query.customizations.hideMissing === true;
  const rows: TimeRow[] = [];
  for (const bucket of plan.buckets) {
    const cell = byKey.get(bucket.key);
    if (hide && !cell) continue;
    const row: TimeRow = { timestamp: bucket.label };
    for (const name of series) {
      setSeriesValue(row, name, cell?.has(name) ? (cell.get(name) ?? empty) : empty);
    }
    rows.push(row);
  }
  return { rows, combined: total.value, series };
}

/**
 * Ratio Line: per bucket, the aggregate over the events matching `numerator_filters` divided by
 * the one over `denominator_filters` (both within `filters`); null where either is null or the
 * denominator is 0. A bucket is empty when neither side has an event.
 */
async function ratioLine(
  query: CollectionQuery,
  window: TimeWindow,
  granularity: ResolvedGranularity,
  run: ClickHouseRun,
): Promise<{ rows: TimeRow[]; combined: number | null; series?: string[] }> {
  const empty = emptyValue(query.aggregation);
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return { rows: [], combined: null };
  const plan = bucketPlan(granularity, query.IANA_time_zone, lo, hi);
  const params = new ClickHouseParams();
  const m = query.metric === null ? 'NULL' : numericFieldSql(query.metric, params);
  const num = filtersSql(query.numerator_filters ?? [], params);
  const den = filtersSql(query.denominator_filters ?? [], params);
  const columns = `countIf(${num}) AS nn, countIf(${den}) AS dn,
    ${aggregateSql(query.aggregation, m, params, num)} AS a,
    ${aggregateSql(query.aggregation, m, params, den)} AS b`;
  const where = inWindow(query, lo, hi, params);
  type Sides = { nn: number; dn: number; a: number | null; b: number | null };
  const [found, totals] = await Promise.all([
    rowsOf<Sides & { k: number }>(
      run,
      `SELECT ${keySql(plan, params)} AS k, ${columns}
       FROM ${source(run)} WHERE ${where} GROUP BY k`,
      params,
    ),
    rowsOf<Sides>(run, `SELECT ${columns} FROM ${source(run)} WHERE ${where}`, params),
  ]);
  const ratio = (r: Sides | undefined) => {
    const a = r?.a ?? empty;
    const b = r?.b ?? empty;
    return a === null || b === null || b === 0 ? null : a / b;
  };
  const byKey = new Map(found.map((r) => [r.k, r]));
  for (const r of found) {
    if (!plan.known.has(r.k))
      throw new Error(`ClickHouse bucket key ${r.k} is not in the bucket plan`);
  }
  const hide = query.customizations.hideMissing === true;
  const rows: TimeRow[] = [];
  for (const bucket of plan.buckets) {
    const r = byKey.get(bucket.key);
    if (hide && (r?.nn ?? 0) + (r?.dn ?? 0) === 0) continue;
    rows.push({ timestamp: bucket.label, Ratio: ratio(r) });
  }
  return { rows, combined: ratio(totals[0]) };
}
