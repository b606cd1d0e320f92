import {
  type CollectionQuery,
  type Envelope,
  pickGranularity,
  type ResolvedGranularity,
  type ResolvedWindows,
  type TimeWindow,
} from '@analytics-chart/protocol';
import { type LineKind, lineKind } from './render/line-kinds.ts';
import type { LineAnswer } from './shape/line-shape.ts';

export type { LineAnswer };

/**
 * The windows of a line, the same flow for every driver: the main window, then the compare
 * window (keeping a split line's series) or the compare-filters line, each rendered, run and
 * shaped by the driver's {@link LineRenderer}, and assembled into one envelope.
 */

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
