import type { ChartPayload, ChartSeries } from '@analytics-chart/protocol/chart-payload';
import type { ChartFormatters } from '../chart/chart-formatters.ts';
import { compareDelta } from '../chart/compare-delta.ts';
import { isEmptyPayload, isLineGraph, viewOf } from '../data/payload-shape.ts';

/** How many series the summary describes before saying "and N more". */
const SUMMARY_SERIES = 3;

/**
 * The accessible name of a chart: title, graph type, window and each series' extremes, in the
 * viewer's locale. A screen reader announces it on the canvas (`role="img"`); the full data is in
 * the table view.
 */
export function summarizeChart(payload: ChartPayload, f: ChartFormatters): string {
  const parts = [payload.title ? `${payload.title}. ${payload.graph}` : payload.graph];
  if (payload.range) {
    parts.push(`from ${f.instant(payload.range.start)} to ${f.instant(payload.range.end)}`);
  } else if (isLineGraph(payload.graph) && payload.labels.length) {
    const first = payload.labels[0] ?? '';
    const last = payload.labels[payload.labels.length - 1] ?? '';
    parts.push(`from ${f.longLabel(first)} to ${f.longLabel(last)}`);
  }
  let text = `${parts.join(' ')}.`;
  if (isEmptyPayload(payload)) return `${text} No data for this period.`;

  const view = viewOf(payload.graph);
  if (view === 'value') {
    text += ` Value ${f.number(payload.value)}.`;
    const delta = compareDelta(payload.value, payload.compareValue);
    if (delta) {
      const change =
        delta.relative === null ? f.number(delta.absolute) : f.percent(Math.abs(delta.relative));
      text +=
        delta.direction === 'flat'
          ? ' Unchanged from the previous period.'
          : ` ${delta.direction === 'up' ? 'Up' : 'Down'} ${change} from the previous period (${f.number(payload.compareValue)}).`;
    }
    return text;
  }
  if (view === 'table') {
    const rows = payload.rows?.length ?? 0;
    return `${text} Table with ${rows} ${rows === 1 ? 'row' : 'rows'} and ${payload.columns?.length ?? 0} columns.`;
  }
  const value = payload.graph === 'Ratio Line' ? f.percent : f.number;
  const label = isLineGraph(payload.graph) ? f.longLabel : (l: string) => l;
  const described = payload.series.slice(0, SUMMARY_SERIES).map((s) => {
    const ext = extremes(s);
    if (!ext) return `${s.name}: no values`;
    const [hi, lo] = isLineGraph(payload.graph) ? ['highest', 'lowest'] : ['largest', 'smallest'];
    const at = (i: number) => label(payload.labels[i] ?? '');
    return `${s.name}: ${hi} ${value(ext.max.value)} (${at(ext.max.index)}), ${lo} ${value(ext.min.value)} (${at(ext.min.index)})`;
  });
  const more = payload.series.length - SUMMARY_SERIES;
  if (more > 0) described.push(`and ${more} more series`);
  return `${text} ${described.join('; ')}.`;
}

function extremes(series: ChartSeries) {
  let max: { value: number; index: number } | undefined;
  let min: { value: number; index: number } | undefined;
  series.values.forEach((value, index) => {
    if (value === null) return;
    if (!max || value > max.value) max = { value, index };
    if (!min || value < min.value) min = { value, index };
  });
  return max && min ? { max, min } : undefined;
}
