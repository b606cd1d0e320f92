import {
  type Aggregation,
  type CollectionQuery,
  type Envelope,
  LIMITS,
  valueKey,
} from '@analytics-chart/protocol';
import { setSeriesValue } from '../../set-own.ts';
import { UNIT_SHIFT } from '../plan/calendar-units.ts';
import { type LinePlan, type LineWindow, QUANTILE } from '../plan/collection-plan.ts';
import {
  ExactSum,
  readAggregate,
  readSumParts,
  type SumParts,
  sumOfParts,
} from '../plan/exact-sum.ts';
import { byValueThenName } from '../plan/split-series.ts';
import type { Bucket } from '../plan/time-buckets.ts';
import { growingPercentiles } from './growing-percentiles.ts';

/**
 * The shape stage of the six line kinds, the same for every driver: a driver's statements give
 * each bucket's aggregates, and these turn them into the envelope's rows (hidden empty buckets,
 * running values, ratios, split series). Pure: no SQL and no storage.
 */

/** A line's rows and whole-window value over one window, with its series when split. */
export interface LineAnswer {
  rows: LineRow[];
  combined: number | null;
  series?: string[];
}

/**
 * The layouts of a line statement's rows, which a driver's render writes and
 * {@link lineWindowAnswer} reads (values plain: numbers, bigints, strings, and a sum's parts as
 * {@link readSumParts} reads them):
 *
 * - `populations` (bucket, ratio and compare-filters lines): `k`, then per population its value
 *   and, except for Count, its event count; `k` is the bucket key, or the calendar unit where
 *   the plan has units, or null for the whole window (Avg and percentiles);
 * - `running` (Cumulative Line): `k`, the bucket's count, and its sum's parts or, for a
 *   percentile, the percentile over the window's start to the bucket's end;
 * - `cells` (split lines of Count, Sum and Avg): split value, `k`, count and sum's parts per cell;
 * - `ranked` (split lines ranked by the database): part (0 a cell, 1 a series' whole-window
 *   value, 2 the window's total), split value, `k`, value, count.
 */
export type LineForm = 'populations' | 'running' | 'cells' | 'ranked';

/** A row as the run stage hands it over. */
type Row = readonly unknown[];

function num(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** One row of a line: `{timestamp, <value key or series>: value, …}`. */
export type LineRow = Record<string, string | number | null>;

/**
 * One row per bucket of the plan, labelled, with `values[i]` under `key`; with `hideMissing`,
 * a bucket no event fell in (`held[i]` false) has no row.
 */
export function lineRows(
  buckets: readonly Bucket[],
  hideMissing: boolean,
  held: readonly boolean[],
  key: string,
  values: readonly (number | null)[],
): LineRow[] {
  const rows: LineRow[] = [];
  for (let i = 0; i < buckets.length; i++) {
    if (hideMissing && !held[i]) continue;
    rows.push({ timestamp: (buckets[i] as Bucket).label, [key]: values[i] ?? null });
  }
  return rows;
}

/** A Ratio Line's value: null where either side is null or the denominator is 0. */
export function ratioOf(numerator: number | null, denominator: number | null): number | null {
  return numerator === null || denominator === null || denominator === 0
    ? null
    : numerator / denominator;
}

/**
 * What one bucket adds to a Cumulative Line: its event count, its metric's exact sum (with how
 * many values it holds, for the mean), or, for a percentile, the percentile over the growing
 * frame up to the bucket's end.
 */
export interface RunningPart {
  held: boolean;
  count: number;
  sum: ExactSum | null;
  quantile: number | null;
}

/**
 * A Cumulative Line's value per bucket: over the window's start to the bucket's end. Count
 * adds up; Sum and Avg add the buckets' exact sums into `running` and round once per value
 * shown; a percentile keeps the last bucket's value through buckets without events.
 */
export function runningValues(
  aggregation: Aggregation,
  parts: readonly RunningPart[],
  running: ExactSum,
): (number | null)[] {
  let count = 0;
  let last: number | null = null;
  return parts.map((part): number | null => {
    count += part.count;
    if (part.sum) running.addSum(part.sum);
    if (aggregation === 'Count') return count;
    if (aggregation === 'Sum') return running.sum();
    if (aggregation === 'Avg') return running.mean();
    if (part.held) last = part.quantile ?? last;
    return last;
  });
}

/**
 * Split values by their value over the window: largest first, nulls last, ties by name in the
 * databases' text order, so that a split ranked here and one ranked in SQL agree.
 */
export function rankSeries(values: Array<{ name: string; value: number | null }>): string[] {
  return values.sort(byValueThenName).map((r) => r.name);
}

/**
 * A split line's wide rows `{timestamp, "<series>": value, …}`: each series' value in each
 * bucket, by bucket key (`cells[s]`, one map per series; none or null shown as `empty`); with
 * `hideMissing`, a bucket no event of the series fell in (`held[i]` false) has no row.
 */
export function splitRows(
  buckets: readonly Bucket[],
  hideMissing: boolean,
  held: readonly boolean[],
  series: readonly string[],
  cells: readonly (ReadonlyMap<number, number | null> | undefined)[],
  empty: number | null,
): LineRow[] {
  const rows: LineRow[] = [];
  for (let i = 0; i < buckets.length; i++) {
    if (hideMissing && !held[i]) continue;
    const bucket = buckets[i] as Bucket;
    const row: LineRow = { timestamp: bucket.label };
    for (let s = 0; s < series.length; s++) {
      setSeriesValue(row, series[s] as string, cells[s]?.get(bucket.key) ?? empty);
    }
    rows.push(row);
  }
  return rows;
}

/**
 * The lines one window's rows answer, read as `form` says (null: the window has no bucket, no
 * statement ran): one line, or for Compare Line the line over `filters` and the one over
 * `filters ∧ compare_filters`.
 */
export function lineWindowAnswer(
  query: CollectionQuery,
  line: LinePlan,
  window: LineWindow,
  form: LineForm | null,
  rows: readonly Row[],
  fixedSeries: readonly string[] | null,
): LineAnswer[] {
  const { aggregation } = query;
  const hide = query.customizations.hideMissing === true;
  const buckets = window.buckets?.buckets ?? [];
  const key = valueKey(aggregation, query.metric);
  if (line.kind.split) {
    const aggregates =
      form === 'ranked' ? rankedCells(aggregation, line.empty, rows) : cells(aggregation, rows);
    return [splitLine(line.empty, hide, buckets, aggregates, fixedSeries)];
  }
  if (line.kind.value === 'running') {
    return [runningLine(aggregation, line.empty, hide, buckets, key, rows)];
  }
  const series = populations(
    aggregation,
    line,
    window,
    line.kind.value === 'bucket' && line.kind.second === 'compare window' ? 1 : 2,
    rows,
  );
  const lineOf = (s: Series): LineAnswer => ({
    rows: lineRows(
      buckets,
      hide,
      s.counts.map((c) => c > 0),
      key,
      s.values,
    ),
    combined: s.combined,
  });
  if (line.kind.value === 'ratio') {
    const [num, den] = series as [Series, Series];
    const counts = num.counts.map((c, i) => c + (den.counts[i] ?? 0));
    return [
      {
        rows: lineRows(
          buckets,
          hide,
          counts.map((c) => c > 0),
          'Ratio',
          num.values.map((v, i) => ratioOf(v, den.values[i] ?? null)),
        ),
        combined: ratioOf(num.combined, den.combined),
      },
    ];
  }
  return series.map(lineOf);
}

/**
 * The envelope of a line from its windows' answers: the main window's lines (two for Compare
 * Line) and the compare window's line, where the plan has one.
 */
export function lineEnvelopeOf(
  line: LinePlan,
  main: readonly LineAnswer[],
  second: LineAnswer | null,
): Envelope {
  const { granularity } = line;
  const [own, other] = main as [LineAnswer, LineAnswer | undefined];
  if (line.kind.second === 'compare filters' && other) {
    return {
      result: own.rows,
      metadata: { granularity, combined: own.combined, compare_combined: other.combined },
      compare_result: other.rows,
    };
  }
  const envelope: Envelope = {
    result: own.rows,
    metadata: { granularity, combined: own.combined },
  };
  if (line.kind.split) envelope.metadata.series = own.series ?? [];
  if (second) {
    envelope.compare_result = second.rows;
    envelope.metadata.compare_combined = second.combined;
  }
  return envelope;
}

/** Per-bucket values of one population, with event counts (for `hideMissing`). */
interface Series {
  values: (number | null)[];
  counts: number[];
  combined: number | null;
}

/**
 * The `populations` rows as one series per population. Count and Sum over the window are the
 * sums of their buckets (a Sum's exactly, rounded once each: `plan/exact-sum.ts`); Avg and
 * percentiles read the whole window's row.
 */
function populations(
  aggregation: Aggregation,
  line: LinePlan,
  window: LineWindow,
  count: number,
  rows: readonly Row[],
): Series[] {
  const buckets = window.buckets?.buckets ?? [];
  const { empty } = line;
  const series: Series[] = Array.from({ length: count }, () => ({
    values: buckets.map(() => empty),
    counts: buckets.map(() => 0),
    combined: empty,
  }));
  if (buckets.length === 0) return series;
  const { units } = window;
  const width = aggregation === 'Count' ? 1 : 2;
  const index = new Map(buckets.map((b, i) => [b.key, i]));
  const sums = aggregation === 'Sum' ? series.map(() => buckets.map(() => new ExactSum())) : null;
  for (const row of rows) {
    const k = num(row[0]);
    const i =
      k === null
        ? undefined
        : index.get(units ? units.bucketOf(k - UNIT_SHIFT / units.seconds) : k);
    if (units && i === undefined) throw new Error(`time unit ${k} is not in the bucket plan`);
    series.forEach((s, p) => {
      const cell = row[1 + width * p] ?? null;
      const events = num(row[width + width * p]) ?? 0;
      if (k === null) s.combined = readAggregate(aggregation, cell) ?? empty;
      else if (i === undefined) return;
      else if (sums) {
        // A Sum's parts add up per bucket and are rounded once there, never per row.
        if (cell !== null) sums[p]?.[i]?.addParts(readSumParts(cell));
        s.counts[i] = (s.counts[i] ?? 0) + events;
      } else if (units) {
        // Additive: Count and Sum read 0 where empty, so a bucket adds its units up.
        s.values[i] = (s.values[i] ?? 0) + (readAggregate(aggregation, cell) ?? 0);
        s.counts[i] = (s.counts[i] ?? 0) + events;
      } else {
        s.values[i] = readAggregate(aggregation, cell) ?? empty;
        s.counts[i] = events;
      }
    });
  }
  if (sums) {
    series.forEach((s, p) => {
      const total = new ExactSum();
      for (const [i, sum] of (sums[p] ?? []).entries()) {
        s.values[i] = sum.sum();
        total.addSum(sum);
      }
      s.combined = total.sum();
    });
  } else if (line.additive) {
    for (const s of series) s.combined = s.values.reduce<number>((sum, v) => sum + (v ?? 0), 0);
  }
  return series;
}

/** A Cumulative Line from its `running` rows; the running sum stays exact, rounded once per bucket. */
function runningLine(
  aggregation: Aggregation,
  empty: number | null,
  hide: boolean,
  buckets: readonly Bucket[],
  key: string,
  rows: readonly Row[],
): LineAnswer {
  if (buckets.length === 0) return { rows: [], combined: empty };
  const percentile = !['Count', 'Sum', 'Avg'].includes(aggregation);
  const index = new Map(buckets.map((b, i) => [b.key, i]));
  const counts = buckets.map(() => 0);
  const parts: (SumParts | null)[] = buckets.map(() => null);
  const bucketValues: number[][] = buckets.map(() => []);
  for (const row of rows) {
    const i = index.get(num(row[0]) ?? Number.NaN);
    if (i === undefined) continue;
    counts[i] = num(row[1]) ?? 0;
    if (percentile) bucketValues[i] = ((row[2] ?? []) as unknown[]).map(Number);
    else parts[i] = readSumParts(row[2] ?? null);
  }
  const quantiles = percentile
    ? growingPercentiles(QUANTILE[aggregation] as number, bucketValues)
    : [];
  const values = runningValues(
    aggregation,
    buckets.map((_, i) => {
      const own = parts[i];
      return {
        held: (counts[i] ?? 0) > 0,
        count: counts[i] ?? 0,
        sum: own ? new ExactSum().addParts(own) : null,
        quantile: quantiles[i] ?? null,
      };
    }),
    new ExactSum(),
  );
  return {
    rows: lineRows(
      buckets,
      hide,
      counts.map((c) => c > 0),
      key,
      values,
    ),
    combined: values[values.length - 1] ?? empty,
  };
}

/** One split value in one bucket. */
interface Cell {
  value: number | null;
  count: number;
}

/** A split window's cells, its values' whole-window values to rank, and its total. */
interface SplitAggregates {
  cells: Map<string, Map<number, Cell>>;
  ranked: Array<{ name: string; value: number | null }>;
  combined: number | null;
}

/**
 * The `cells` rows: each value's total and the window's total follow exactly from the cells'
 * counts and sums, each rounded once (`plan/exact-sum.ts`).
 */
function cells(aggregation: Aggregation, rows: readonly Row[]): SplitAggregates {
  type Totals = { count: number; sum: ExactSum };
  const valueFrom = (t: Totals) =>
    aggregation === 'Count' ? t.count : aggregation === 'Sum' ? t.sum.sum() : t.sum.mean();
  const byName = new Map<string, Map<number, Cell>>();
  const totals = new Map<string, Totals>();
  const all: Totals = { count: 0, sum: new ExactSum() };
  const add = (t: Totals, cell: Totals) => {
    t.count += cell.count;
    t.sum.addSum(cell.sum);
  };
  for (const [sp, k, c, parts] of rows) {
    const name = String(sp);
    const cell: Totals = {
      count: num(c) ?? 0,
      sum: aggregation === 'Count' ? new ExactSum() : sumOfParts(readSumParts(parts ?? null)),
    };
    let byKey = byName.get(name);
    let total = totals.get(name);
    if (!byKey || !total) {
      byKey = new Map();
      byName.set(name, byKey);
      total = { count: 0, sum: new ExactSum() };
      totals.set(name, total);
    }
    byKey.set(num(k) ?? 0, { value: valueFrom(cell), count: cell.count });
    add(total, cell);
    add(all, cell);
  }
  return {
    cells: byName,
    ranked: [...totals].map(([name, t]) => ({ name, value: valueFrom(t) })),
    combined: valueFrom(all),
  };
}

/** The `ranked` rows: the top series' cells, their whole-window values and the total. */
function rankedCells(
  aggregation: Aggregation,
  empty: number | null,
  rows: readonly Row[],
): SplitAggregates {
  const result: SplitAggregates = { cells: new Map(), ranked: [], combined: empty };
  for (const [part, sp, k, v, c] of rows) {
    if (part === 1)
      result.ranked.push({ name: String(sp), value: readAggregate(aggregation, v ?? null) });
    else if (part === 2) result.combined = readAggregate(aggregation, v ?? null) ?? empty;
    else {
      let byKey = result.cells.get(String(sp));
      if (!byKey) {
        byKey = new Map();
        result.cells.set(String(sp), byKey);
      }
      byKey.set(num(k) ?? 0, {
        value: readAggregate(aggregation, v ?? null) ?? empty,
        count: num(c) ?? 0,
      });
    }
  }
  return result;
}

/**
 * Multi and Stacked Line over one window: wide rows for the top 10 split values by their
 * whole-window value (ties by name), or `fixedSeries`. Events without the split field are
 * left out, including from `combined`.
 */
function splitLine(
  empty: number | null,
  hide: boolean,
  buckets: readonly Bucket[],
  aggregates: SplitAggregates,
  fixedSeries: readonly string[] | null,
): LineAnswer {
  if (buckets.length === 0) return { rows: [], combined: empty, series: [...(fixedSeries ?? [])] };
  const series = fixedSeries
    ? [...fixedSeries]
    : rankSeries(aggregates.ranked).slice(0, LIMITS.series);
  // Each chosen series' cells, found once rather than once per bucket.
  const chosen = series.map((name) => aggregates.cells.get(name));
  const counts = buckets.map((bucket) => {
    let count = 0;
    for (const byKey of chosen) count += byKey?.get(bucket.key)?.count ?? 0;
    return count;
  });
  const rows = splitRows(
    buckets,
    hide,
    counts.map((c) => c > 0),
    series,
    chosen.map((byKey) => byKey && new Map([...byKey].map(([k, cell]) => [k, cell.value]))),
    empty,
  );
  return { rows, combined: aggregates.combined, series };
}
