import type { ChartPayload } from '@analytics-chart/protocol/chart-payload';
import type { ChartFormatters } from '../chart/chart-formatters.ts';
import { compareSeriesName } from '../chart/compare-series-name.ts';
import { funnelSteps } from '../chart/funnel-steps.ts';
import { isLineGraph } from '../data/payload-shape.ts';

/** How a column's cells are read: a bucket label, Unix seconds, a number, a fraction, or text. */
export type ColumnKind = 'label' | 'timestamp' | 'number' | 'percent' | 'text';

/** A payload as rows and typed columns: the one source for the HTML table, the CSV and the summary. */
export interface DataTable {
  columns: { name: string; kind: ColumnKind }[];
  rows: unknown[][];
}

/** The payload's data as a table, whatever the graph type. Pure. */
export function toDataTable(payload: ChartPayload): DataTable {
  const { graph, labels, series } = payload;
  if (graph === 'Table' || graph === 'Samples') {
    const columns = (payload.columns ?? []).map((name, i) => ({
      name,
      kind: (graph === 'Samples' && i === 0 ? 'timestamp' : 'text') as ColumnKind,
    }));
    return { columns, rows: payload.rows ?? [] };
  }
  if (graph === 'Single Value') {
    const columns: DataTable['columns'] = [{ name: 'Value', kind: 'number' }];
    const row: unknown[] = [payload.value ?? null];
    if (payload.compareValue !== undefined) {
      columns.push({ name: 'Previous period', kind: 'number' });
      row.push(payload.compareValue);
    }
    return { columns, rows: [row] };
  }
  if (graph === 'Funnel') {
    const first = series[0];
    const steps = funnelSteps(labels, first?.values ?? []);
    return {
      columns: [
        { name: 'Step', kind: 'text' },
        { name: first?.name ?? 'Value', kind: 'number' },
        { name: 'From previous step', kind: 'percent' },
        { name: 'From first step', kind: 'percent' },
      ],
      rows: steps.map((s) => [s.label, s.value, s.fromPrevious, s.fromFirst]),
    };
  }
  const valueKind: ColumnKind = graph === 'Ratio Line' ? 'percent' : 'number';
  const line = isLineGraph(graph);
  const columns: DataTable['columns'] = [
    { name: line ? 'Time' : 'Label', kind: line ? 'label' : 'text' },
    ...series.map((s) => ({ name: s.name, kind: valueKind })),
  ];
  const compare = payload.compare;
  const compareWindow = compare && graph !== 'Compare Line';
  if (compare) {
    if (compareWindow) columns.push({ name: 'Previous period time', kind: 'label' });
    for (const s of compare.series) {
      columns.push({ name: compareSeriesName(s.name, payload), kind: valueKind });
    }
  }
  const rows = labels.map((label, i) => {
    const row: unknown[] = [label, ...series.map((s) => s.values[i] ?? null)];
    if (compare) {
      if (compareWindow) row.push(compare.labels[i] ?? null);
      for (const s of compare.series) row.push(s.values[i] ?? null);
    }
    return row;
  });
  return { columns, rows };
}

/** One cell as text for people: numbers and labels localized, objects as compact JSON. */
export function formatCell(value: unknown, kind: ColumnKind, f: ChartFormatters): string {
  if (value === null || value === undefined) return '';
  switch (kind) {
    case 'label':
      return typeof value === 'string' ? f.longLabel(value) : String(value);
    case 'timestamp':
      return typeof value === 'number' ? f.timestamp(value) : String(value);
    case 'percent':
      return typeof value === 'number' ? f.percent(value) : String(value);
    default:
      if (typeof value === 'number') return f.number(value);
      if (typeof value === 'object') return JSON.stringify(value);
      return String(value);
  }
}
