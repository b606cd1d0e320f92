import {
  type Aggregation,
  type CollectionQuery,
  type Envelope,
  type FilterGroups,
  pickGranularity,
  type ResolvedGranularity,
  type ResolvedWindows,
  resolveWindows,
  type TimeWindow,
} from '@analytics-chart/protocol';
import { EngineError } from '../../engine-error.ts';
import { LINE_KINDS, type LineGraphType, type LineKind } from '../render/line-kinds.ts';
import { type CalendarUnits, calendarUnits } from './calendar-units.ts';
import { type BucketPlan, planBuckets, windowSeconds } from './time-buckets.ts';

/**
 * A collection-mode query with its windows resolved against one reading of the engine's clock:
 * what every storage driver compiles to its own SQL.
 */
export interface CollectionPlan {
  query: CollectionQuery;
  windows: ResolvedWindows;
  /** Every field the query names, in filters, metric and split, each once: what bind resolves. */
  fields: string[];
  /** The fields read as text (the split, `includes`/`excludes` filters): bind writes their string form. */
  textFields: string[];
  /** What the aggregate over no values reads as ({@link emptyValue}), a value the shape stage reads. */
  empty: number | null;
  /** For the six line graph types, what the line draws over which buckets; null otherwise. */
  line: LinePlan | null;
}

/** A line's kind (`render/line-kinds.ts`), its granularity and the buckets of its windows. */
export interface LinePlan {
  kind: LineKind;
  granularity: ResolvedGranularity;
  /** What the aggregate over no values reads as ({@link emptyValue}). */
  empty: number | null;
  /** Whether a window's value is the sum of its buckets' ({@link isAdditive}). */
  additive: boolean;
  main: LineWindow;
  /** The compare window, for a kind whose second line is one and a request that has it. */
  compare: LineWindow | null;
}

/** One window of a line: its whole seconds `lo`…`hi` and its buckets in the zone's calendar. */
export interface LineWindow {
  window: TimeWindow;
  lo: number;
  hi: number;
  /** Every bucket a second of the window can fall in; none where no whole second fits. */
  buckets: BucketPlan | null;
  /**
   * For Count and Sum of an unsplit line over days, weeks or months: spans of UTC time, each
   * within one bucket, that a division keys (`plan/calendar-units.ts`).
   */
  units: CalendarUnits | undefined;
}

/** Plans a collection-mode query at `now` (Unix seconds); a window that cannot be is a 400. */
export function planCollectionQuery(query: CollectionQuery, now: number): CollectionPlan {
  const resolved = resolveWindows(query, now);
  if (!resolved.ok) throw new EngineError(400, resolved.error);
  const windows = resolved.value;
  return {
    query,
    windows,
    ...fieldsRead(query),
    empty: emptyValue(query.aggregation),
    line: planLine(query, windows),
  };
}

/** The line of a line graph type: its windows cut into buckets, each once. */
function planLine(query: CollectionQuery, windows: ResolvedWindows): LinePlan | null {
  const kind = LINE_KINDS[query.graph_type as LineGraphType];
  if (!kind) return null;
  const granularity = pickGranularity(query.granularity, windows.window);
  const additive = isAdditive(query.aggregation);
  const units = additive && !kind.split && kind.value !== 'running';
  const lineWindow = (window: TimeWindow): LineWindow => {
    const { lo, hi } = windowSeconds(window);
    const buckets = lo > hi ? null : planBuckets(granularity, query.IANA_time_zone, lo, hi);
    return {
      window,
      lo,
      hi,
      buckets,
      units: units && buckets?.buckets.length ? calendarUnits(buckets, lo, hi) : undefined,
    };
  };
  const compare = kind.second === 'compare window' && windows.compare ? windows.compare : null;
  return {
    kind,
    granularity,
    empty: emptyValue(query.aggregation),
    additive,
    main: lineWindow(windows.window),
    compare: compare && lineWindow(compare),
  };
}

/**
 * Every field name a query names, in filters, metric and split, each once; and those it reads as
 * text: its split and the fields of `includes`/`excludes` filters.
 */
function fieldsRead(query: CollectionQuery): { fields: string[]; textFields: string[] } {
  const names = new Set<string>();
  const text = new Set<string>();
  const groups: Array<FilterGroups | null | undefined> = [
    query.filters,
    query.compare_filters,
    query.numerator_filters,
    query.denominator_filters,
  ];
  for (const group of groups)
    for (const conditions of group ?? [])
      for (const [name, operator] of conditions) {
        names.add(name);
        if (operator === 'includes' || operator === 'excludes') text.add(name);
      }
  if (query.metric !== null) names.add(query.metric);
  if (query.split !== null) {
    names.add(query.split);
    text.add(query.split);
  }
  return { fields: [...names], textFields: [...text] };
}

/**
 * A collection-mode answer. `json`, when present, is the envelope's JSON text with each Samples
 * payload exactly as stored (a 20-digit integer keeps its digits), for the HTTP app to send
 * as is; in-process callers read `envelope`.
 */
export interface CollectionAnswer {
  envelope: Envelope;
  json?: string;
}

/** What an aggregate over no values reads as: 0 for Count and Sum, null otherwise. */
export function emptyValue(aggregation: Aggregation): number | null {
  return isAdditive(aggregation) ? 0 : null;
}

/**
 * Count and Sum: a window's value is the sum of its parts' values (buckets, spans, a series'
 * cells), which the drivers use to aggregate once and add up.
 */
export function isAdditive(aggregation: Aggregation): boolean {
  return aggregation === 'Count' || aggregation === 'Sum';
}

/**
 * The fraction of each percentile aggregation. Every driver interpolates linearly between the
 * closest ranks, as `numpy.percentile`'s default does.
 */
export const QUANTILE: Partial<Record<Aggregation, number>> = {
  P50: 0.5,
  P75: 0.75,
  P90: 0.9,
  P95: 0.95,
  P99: 0.99,
};
