import type { ChartPayload } from '@analytics-chart/protocol/chart-payload';
import type {
  ChartConfiguration,
  ChartDataset,
  FontSpec,
  ScriptableLineSegmentContext,
} from 'chart.js';
import { isLineGraph, viewOf } from '../data/payload-shape.ts';
import type { ChartFormatters } from './chart-formatters.ts';
import { compareSeriesName } from './compare-series-name.ts';
import { funnelSteps } from './funnel-steps.ts';
import type { ChartTheme } from './resolve-theme.ts';

/** A line point: x is the bucket index, so decimation can run on a linear x axis. */
export interface LinePoint {
  x: number;
  y: number | null;
}

/** The Chart.js configurations this element produces. */
export type AnalyticsChartConfig =
  | ChartConfiguration<'line', LinePoint[]>
  | ChartConfiguration<'bar', (number | null)[]>
  | ChartConfiguration<'pie' | 'doughnut', (number | null)[]>;

/** Inputs besides the payload that decide the drawing. */
export interface ChartConfigOptions {
  theme: ChartTheme;
  formatters: ChartFormatters;
  /** Draw Pie Chart as a doughnut. */
  doughnut: boolean;
  /** Animate transitions (off for the first draw and under `prefers-reduced-motion`). */
  animate: boolean;
}

/** Above this many buckets a line loses its point markers: they would only blur into the line. */
export const POINT_MARKER_LIMIT = 200;

/** The dash of comparison lines (previous period, or Compare Line's second population). */
export const COMPARE_DASH = [6, 4];

/** The dash of a segment leading into or out of a bucket the window only partly covers. */
export const INCOMPLETE_DASH = [2, 3];

/**
 * Chart.js segment styling that dashes the first and last segments when the payload marks those
 * buckets incomplete, so "today so far" does not read as a drop. It reads bucket positions from
 * the points' x values, which survive decimation.
 */
function incompleteSegments(payload: ChartPayload) {
  const { incomplete, labels } = payload;
  if (!incomplete || labels.length < 2) return undefined;
  const last = labels.length - 1;
  return {
    borderDash: (ctx: ScriptableLineSegmentContext) =>
      (incomplete.first && ctx.p0.parsed.x === 0) || (incomplete.last && ctx.p1.parsed.x === last)
        ? INCOMPLETE_DASH
        : undefined,
  };
}

/**
 * Translates a chart payload into a Chart.js configuration. Pure: same payload, theme and locale give
 * the same configuration. Returns null for graph types drawn without a canvas (Single Value, Table,
 * Samples). Legend and tooltip are HTML (see `chart-canvas-controller.ts`), so neither
 * Chart.js plugin is configured or bundled.
 */
export function toChartConfig(
  payload: ChartPayload,
  options: ChartConfigOptions,
): AnalyticsChartConfig | null {
  if (viewOf(payload.graph) !== 'canvas') return null;
  if (isLineGraph(payload.graph)) return lineConfig(payload, options);
  if (payload.graph === 'Pie Chart') return pieConfig(payload, options);
  if (payload.graph === 'Funnel') return funnelConfig(payload, options);
  return barConfig(payload, options);
}

function colorAt(list: string[], i: number): string {
  return list[i % list.length] ?? '#2563eb';
}

function fontOf(theme: ChartTheme): Partial<FontSpec> {
  return { family: theme.fontFamily, size: theme.fontSize };
}

function commonOptions({ theme, animate }: ChartConfigOptions) {
  return {
    responsive: true,
    maintainAspectRatio: false,
    animation: animate ? { duration: 300 } : (false as const),
    color: theme.text,
    font: fontOf(theme),
    layout: { padding: 4 },
    plugins: { analyticsChartBackground: { color: theme.background } },
  };
}

function axisStyle(theme: ChartTheme) {
  return {
    ticks: { color: theme.muted, font: fontOf(theme) },
    grid: { color: theme.grid },
    border: { color: theme.grid },
  };
}

function lineConfig(
  payload: ChartPayload,
  options: ChartConfigOptions,
): ChartConfiguration<'line', LinePoint[]> {
  const { theme, formatters: f } = options;
  const { labels, series, compare } = payload;
  const stacked = payload.graph === 'Stacked Line';
  const ratio = payload.graph === 'Ratio Line';
  const markers = labels.length <= POINT_MARKER_LIMIT;
  const toPoints = (values: (number | null)[]): LinePoint[] => {
    const points = new Array<LinePoint>(values.length);
    for (let x = 0; x < values.length; x++) points[x] = { x, y: values[x] ?? null };
    return points;
  };

  const segment = incompleteSegments(payload);
  const datasets: ChartDataset<'line', LinePoint[]>[] = series.map((s, i) => ({
    label: s.name,
    data: toPoints(s.values),
    borderColor: colorAt(theme.palette, i),
    backgroundColor: colorAt(theme.palette, i),
    borderWidth: 2,
    pointRadius: markers ? 2.5 : 0,
    pointHoverRadius: 4,
    ...(segment ? { segment } : {}),
  }));
  // Comparison lines sit on the same x positions by index: bucket i of the previous window is
  // drawn over bucket i of the current one.
  for (const [i, s] of (compare?.series ?? []).entries()) {
    datasets.push({
      label: compareSeriesName(s.name, payload),
      data: toPoints(s.values.slice(0, labels.length)),
      borderColor: colorAt(theme.palette, i),
      backgroundColor: colorAt(theme.palette, i),
      borderWidth: 1.5,
      borderDash: COMPARE_DASH,
      pointRadius: 0,
      pointHoverRadius: 3,
      stack: 'compare',
    });
  }
  const common = commonOptions(options);
  const axis = axisStyle(theme);
  return {
    type: 'line',
    data: { datasets },
    options: {
      ...common,
      // Points come as {x, y} in bucket order: no parsing pass, and decimation can run.
      parsing: false,
      normalized: true,
      spanGaps: false,
      interaction: { mode: 'index', intersect: false },
      scales: {
        x: {
          type: 'linear',
          min: 0,
          max: Math.max(0, labels.length - 1),
          ...axis,
          grid: { display: false },
          ticks: {
            ...axis.ticks,
            precision: 0,
            maxRotation: 0,
            autoSkipPadding: 16,
            callback: (v) => {
              const i = Number(v);
              return Number.isInteger(i) ? f.shortLabel(labels[i] ?? '') : '';
            },
          },
        },
        y: {
          type: 'linear',
          beginAtZero: true,
          stacked,
          ...axis,
          border: { display: false },
          ticks: {
            ...axis.ticks,
            callback: (v) => (ratio ? f.percent(Number(v)) : f.axisNumber(Number(v))),
          },
        },
      },
      plugins: {
        ...common.plugins,
        // Stacked areas must keep every series' x positions aligned, so they are never decimated.
        decimation: { enabled: !stacked, algorithm: 'lttb' },
        analyticsChartStackFill: {
          colors: stacked ? series.map((_, i) => colorAt(theme.paletteFill, i)) : [],
        },
      },
    },
  };
}

function barConfig(
  payload: ChartPayload,
  options: ChartConfigOptions,
): ChartConfiguration<'bar', (number | null)[]> {
  const { theme, formatters: f } = options;
  const axis = axisStyle(theme);
  return {
    type: 'bar',
    data: {
      labels: payload.labels,
      datasets: payload.series.map((s, i) => ({
        label: s.name,
        data: s.values,
        backgroundColor: colorAt(theme.palette, i),
        borderRadius: 3,
        maxBarThickness: 56,
      })),
    },
    options: {
      ...commonOptions(options),
      interaction: { mode: 'index', intersect: false },
      scales: {
        x: { type: 'category', ...axis, grid: { display: false } },
        y: {
          type: 'linear',
          beginAtZero: true,
          ...axis,
          border: { display: false },
          ticks: { ...axis.ticks, callback: (v) => f.axisNumber(Number(v)) },
        },
      },
    },
  };
}

function funnelConfig(
  payload: ChartPayload,
  options: ChartConfigOptions,
): ChartConfiguration<'bar', (number | null)[]> {
  const { theme, formatters: f } = options;
  const first = payload.series[0] ?? { name: 'Value', values: [] };
  const steps = funnelSteps(payload.labels, first.values);
  const axis = axisStyle(theme);
  return {
    type: 'bar',
    data: {
      labels: payload.labels,
      datasets: [
        {
          label: first.name,
          data: first.values,
          backgroundColor: colorAt(theme.palette, 0),
          borderRadius: 3,
          maxBarThickness: 56,
        },
      ],
    },
    options: {
      ...commonOptions(options),
      indexAxis: 'y',
      interaction: { mode: 'index', intersect: false },
      scales: {
        x: {
          type: 'linear',
          beginAtZero: true,
          ...axis,
          ticks: { ...axis.ticks, callback: (v) => f.axisNumber(Number(v)) },
        },
        y: {
          type: 'category',
          ...axis,
          grid: { display: false },
          ticks: {
            ...axis.ticks,
            color: theme.text,
            // Each step's conversion from the one before sits under its name.
            callback: (_v, i) => {
              const step = steps[i];
              if (!step) return '';
              return i === 0 || step.fromPrevious === null
                ? step.label
                : [step.label, `${f.percent(step.fromPrevious)} of previous`];
            },
          },
        },
      },
    },
  };
}

function pieConfig(
  payload: ChartPayload,
  options: ChartConfigOptions,
): ChartConfiguration<'pie' | 'doughnut', (number | null)[]> {
  const { theme, doughnut } = options;
  const first = payload.series[0] ?? { name: 'Value', values: [] };
  return {
    type: doughnut ? 'doughnut' : 'pie',
    data: {
      labels: payload.labels,
      datasets: [
        {
          label: first.name,
          data: first.values,
          backgroundColor: payload.labels.map((_, i) => colorAt(theme.palette, i)),
          borderColor: theme.background,
          borderWidth: 2,
        },
      ],
    },
    options: { ...commonOptions(options), cutout: doughnut ? '55%' : 0 },
  };
}
