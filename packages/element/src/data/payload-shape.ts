import type { ChartPayload } from '@analytics-chart/protocol/chart-payload';
import type { GraphType } from '@analytics-chart/protocol/vocabulary';

/** How a graph type is shown: drawn on a canvas, as one big number, or as an HTML table. */
export type ChartView = 'canvas' | 'value' | 'table';

/** The view for a graph type. */
export function viewOf(graph: GraphType): ChartView {
  if (graph === 'Single Value') return 'value';
  if (graph === 'Table' || graph === 'Samples') return 'table';
  return 'canvas';
}

/** Line graphs share the time-series drawing: bucket labels on x, one line per series. */
export function isLineGraph(graph: GraphType): boolean {
  return graph.endsWith(' Line');
}

/**
 * True when there is nothing to draw: no buckets or rows, or only null values. Zeros are data (a
 * day with no sign-ups is worth seeing); nulls are not.
 */
export function isEmptyPayload(payload: ChartPayload): boolean {
  const view = viewOf(payload.graph);
  if (view === 'value') return payload.value === null || payload.value === undefined;
  if (view === 'table') return !payload.rows?.length;
  if (!payload.labels.length) return true;
  return payload.series.every((s) => s.values.every((v) => v === null));
}
