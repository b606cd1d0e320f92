import {
  type CollectionQuery,
  type Envelope,
  pickGranularity,
  type ResolvedGranularity,
  type ResolvedWindows,
  type TimeWindow,
} from '@analytics-chart/protocol';

/** The six time-series graph types. */
export type LineGraphType =
  | 'Single Line'
  | 'Cumulative Line'
  | 'Ratio Line'
  | 'Compare Line'
  | 'Multi Line'
  | 'Stacked Line';

/**
 * What one line kind draws, the one description both dialects' renderers read:
 *
 * - `value`: per bucket, the aggregate over the bucket (`bucket`), over the window's start to
 *   the bucket's end (`running`), or over `numerator_filters` divided by the one over
 *   `denominator_filters`, null over 0 (`ratio`);
 * - `split`: one series per split value, the top 10 by their whole-window value, in wide rows;
 *   the compare window keeps the main window's series;
 * - `second`: what `compare_result` holds: the same line over the compare window, when the
 *   request has one, or the line over `filters ∧ compare_filters` in the same window.
 */
export interface LineKind {
  value: 'bucket' | 'running' | 'ratio';
  split: boolean;
  second: 'compare window' | 'compare filters';
}

export const LINE_KINDS: Readonly<Record<LineGraphType, LineKind>> = {
  'Single Line': { value: 'bucket', split: false, second: 'compare window' },
  'Cumulative Line': { value: 'running', split: false, second: 'compare window' },
  'Ratio Line': { value: 'ratio', split: false, second: 'compare window' },
  'Compare Line': { value: 'bucket', split: false, second: 'compare filters' },
  'Multi Line': { value: 'bucket', split: true, second: 'compare window' },
  'Stacked Line': { value: 'bucket', split: true, second: 'compare window' },
};

/** The kind of a time-series graph type (a Single Line for any other). */
export function lineKind(graphType: string): LineKind {
  return LINE_KINDS[graphType as LineGraphType] ?? LINE_KINDS['Single Line'];
}

/** A line's rows and whole-window value over one window, with its series when split. */
export interface LineAnswer {
  rows: Record<string, string | number | null>[];
  combined: number | null;
  series?: string[];
}

/** What a driver renders, runs and shapes for a line kind. */
export interface LineRenderer {
  /** One window of a line of `kind`; `fixedSeries`: a split line's series, kept, or null to rank. */
  window(
    kind: LineKind,
    window: TimeWindow,
    granularity: ResolvedGranularity,
    fixedSeries: string[] | null,
  ): Promise<LineAnswer>;
  /** The line over `filters` and the line over `filters ∧ compare_filters`, in one window. */
  compareFilters(
    window: TimeWindow,
    granularity: ResolvedGranularity,
  ): Promise<[LineAnswer, LineAnswer]>;
}

/** The envelope of any line kind, as its description says, from a driver's renderer. */
export async function lineEnvelope(
  query: CollectionQuery,
  windows: ResolvedWindows,
  render: LineRenderer,
): Promise<Envelope> {
  const kind = lineKind(query.graph_type);
  const granularity = pickGranularity(query.granularity, windows.window);
  if (kind.second === 'compare filters') {
    const [main, other] = await render.compareFilters(windows.window, granularity);
    return {
      result: main.rows,
      metadata: { granularity, combined: main.combined, compare_combined: other.combined },
      compare_result: other.rows,
    };
  }
  const main = await render.window(kind, windows.window, granularity, null);
  const envelope: Envelope = {
    result: main.rows,
    metadata: { granularity, combined: main.combined },
  };
  if (kind.split) envelope.metadata.series = main.series ?? [];
  if (windows.compare) {
    const fixed = kind.split ? (main.series ?? []) : null;
    const other = await render.window(kind, windows.compare, granularity, fixed);
    envelope.compare_result = other.rows;
    envelope.metadata.compare_combined = other.combined;
  }
  return envelope;
}
