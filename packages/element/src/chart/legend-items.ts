import type { ChartPayload } from '@analytics-chart/protocol/chart-payload';
import { isLineGraph } from '../data/payload-shape.ts';
import { compareSeriesName } from './compare-series-name.ts';

/** One legend entry: its text, its palette slot, and whether its line is dashed (comparisons). */
export interface LegendItem {
  label: string;
  /** Index into the palette (cycled by the renderer). */
  color: number;
  dashed: boolean;
}

/**
 * The legend of a payload, drawn as HTML rather than on the canvas: screen readers and translators
 * read it, it wraps on narrow pages, and Chart.js's legend plugin stays out of the bundle. Empty when
 * a legend would say nothing (a single series, a funnel).
 */
export function legendItems(payload: ChartPayload): LegendItem[] {
  if (payload.graph === 'Pie Chart') {
    return payload.labels.map((label, color) => ({ label, color, dashed: false }));
  }
  if (payload.graph === 'Funnel') return [];
  const items = payload.series.map((s, color) => ({ label: s.name, color, dashed: false }));
  if (isLineGraph(payload.graph)) {
    for (const [color, s] of (payload.compare?.series ?? []).entries()) {
      items.push({ label: compareSeriesName(s.name, payload), color, dashed: true });
    }
  }
  return items.length > 1 ? items : [];
}
