import type { ChartPayload } from '@analytics-chart/protocol/chart-payload';
import type { ChartFormatters } from '../chart/chart-formatters.ts';
import { compareSeriesName } from '../chart/compare-series-name.ts';
import { funnelSteps } from '../chart/funnel-steps.ts';
import { isLineGraph } from '../data/payload-shape.ts';

/** A point Chart.js reports as active: which dataset, and which element of its (drawn) data. */
export interface ActivePoint {
  datasetIndex: number;
  index: number;
}

/** One line of a tooltip. */
export interface PointRow {
  name: string;
  value: string;
  color: number;
  dashed: boolean;
}

/** What the tooltip (and the keyboard live region) says about the active points. */
export interface PointDescription {
  title: string;
  rows: PointRow[];
  notes: string[];
}

/**
 * Describes the active points in the viewer's locale. `drawn` is the chart's dataset data as drawn:
 * after decimation a line's element index no longer equals its bucket, so the bucket is read from
 * the point's `x`. Pure.
 */
export function describePoints(
  payload: ChartPayload,
  points: ActivePoint[],
  drawn: { data: unknown[] }[],
  f: ChartFormatters,
): PointDescription | null {
  const first = points[0];
  if (!first) return null;
  const { labels, series, graph } = payload;

  if (isLineGraph(graph)) {
    const bucketOf = (p: ActivePoint) => {
      const point = drawn[p.datasetIndex]?.data[p.index] as { x?: number } | undefined;
      return point?.x ?? p.index;
    };
    const x = bucketOf(first);
    const value = graph === 'Ratio Line' ? f.percent : f.number;
    const compare = payload.compare;
    const rows: PointRow[] = [];
    let compared = false;
    for (const p of points) {
      const bucket = bucketOf(p);
      const isCompare = p.datasetIndex >= series.length;
      const s = isCompare
        ? compare?.series[p.datasetIndex - series.length]
        : series[p.datasetIndex];
      if (!s) continue;
      compared ||= isCompare;
      rows.push({
        name: isCompare ? compareSeriesName(s.name, payload) : s.name,
        value: value(s.values[bucket] ?? null),
        color: isCompare ? p.datasetIndex - series.length : p.datasetIndex,
        dashed: isCompare,
      });
    }
    const compareLabel = compare?.labels[x];
    const notes =
      compared && graph !== 'Compare Line' && compareLabel
        ? [`Previous period: ${f.longLabel(compareLabel)}`]
        : [];
    return { title: f.longLabel(labels[x] ?? ''), rows, notes };
  }

  const title = labels[first.index] ?? '';
  if (graph === 'Pie Chart') {
    const s = series[0];
    const v = s?.values[first.index] ?? null;
    const total = (s?.values ?? []).reduce<number>((sum, n) => sum + (n ?? 0), 0);
    const share = v !== null && total > 0 ? ` (${f.percent(v / total)})` : '';
    return {
      title,
      rows: [
        { name: s?.name ?? '', value: f.number(v) + share, color: first.index, dashed: false },
      ],
      notes: [],
    };
  }
  if (graph === 'Funnel') {
    const s = series[0];
    const step = funnelSteps(labels, s?.values ?? [])[first.index];
    const notes =
      step && first.index > 0
        ? [
            `From previous step: ${f.percent(step.fromPrevious)}`,
            `From first step: ${f.percent(step.fromFirst)}`,
          ]
        : [];
    return {
      title,
      rows: [{ name: s?.name ?? '', value: f.number(step?.value), color: 0, dashed: false }],
      notes,
    };
  }
  return {
    title,
    rows: points.flatMap((p) => {
      const s = series[p.datasetIndex];
      return s
        ? [
            {
              name: s.name,
              value: f.number(s.values[p.index]),
              color: p.datasetIndex,
              dashed: false,
            },
          ]
        : [];
    }),
    notes: [],
  };
}

/** A description as one sentence for the live region. */
export function pointDescriptionText(d: PointDescription): string {
  return [d.title, ...d.rows.map((r) => `${r.name}: ${r.value}`), ...d.notes].join('. ');
}
