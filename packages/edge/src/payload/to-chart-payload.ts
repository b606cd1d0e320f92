import {
  type ChartPayload,
  type ChartSeries,
  type Envelope,
  GRANULARITIES,
  incompleteBuckets,
  isSqlQuery,
  type QueryRequest,
  type ResolvedGranularity,
  valueKey,
} from '@analytics-chart/protocol';
import type { QueryDefinition } from '../registry/query-definition.ts';

/** What the trimming needs besides the envelope and the query. */
export interface TrimContext {
  /** The resolved window in Unix seconds, when the query has one. */
  window?: { start: number; end: number } | undefined;
  /** ISO instants: when the result was fetched and until when it is fresh. */
  generatedAt: string;
  expiresAt: string;
}

/**
 * A resolved window in whole Unix seconds, for the payload's `range`. Rounded outward (start
 * down, end up): events have whole-second timestamps and a window excludes both ends, so the
 * whole seconds inside the result are exactly those inside the fractional window; the end
 * rounded down would leave out the events of the window's last second.
 */
export function wholeSecondWindow(window: { start: number; end: number }): {
  start: number;
  end: number;
} {
  return { start: Math.floor(window.start), end: Math.ceil(window.end) };
}

type Row = Record<string, unknown>;

function rowsOf(list: unknown[] | undefined): Row[] {
  if (!list) return [];
  return list.map((row) =>
    typeof row === 'object' && row !== null && !Array.isArray(row) ? (row as Row) : {},
  );
}

/** A chart value: numbers pass, numeric strings (64-bit counts) are read, anything else is null. */
function numberOf(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
    return Number(value);
  return null;
}

function resolvedGranularity(value: string): ResolvedGranularity | undefined {
  return GRANULARITIES.find((g): g is ResolvedGranularity => g !== 'Auto' && g === value);
}

function labelOf(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function own(row: Row, key: string): unknown {
  return Object.hasOwn(row, key) ? row[key] : undefined;
}

/**
 * The key holding a row's value: the expected one when rows carry it, else the first key that is
 * not excluded and holds a number or null (service versions differ in how they name columns).
 */
function valueKeyOf(rows: Row[], expected: string, exclude: readonly string[]): string {
  const first = rows[0];
  if (!first || Object.hasOwn(first, expected)) return expected;
  for (const [key, value] of Object.entries(first)) {
    if (!exclude.includes(key) && (value === null || typeof value === 'number')) return key;
  }
  return expected;
}

/** One series from one value key, plus the labels from a label key. */
function column(
  rows: Row[],
  labelKey: string,
  key: string,
): { labels: string[]; series: ChartSeries } {
  return {
    labels: rows.map((row) => labelOf(own(row, labelKey))),
    series: { name: key, values: rows.map((row) => numberOf(own(row, key))) },
  };
}

/** Series names of wide Multi/Stacked rows: metadata order first, else keys in order of appearance. */
function wideNames(rows: Row[], listed: unknown, labelKey: string): string[] {
  if (Array.isArray(listed) && listed.every((n) => typeof n === 'string'))
    return listed as string[];
  const names: string[] = [];
  for (const row of rows)
    for (const key of Object.keys(row))
      if (key !== labelKey && !names.includes(key)) names.push(key);
  return names;
}

function wide(rows: Row[], labelKey: string, names: string[]) {
  return {
    labels: rows.map((row) => labelOf(own(row, labelKey))),
    series: names.map((name) => ({ name, values: rows.map((row) => numberOf(own(row, name))) })),
  };
}

/** Long SQL rows `{time, split, value}` pivoted to one series per split value. */
function pivot(rows: Row[], labelKey: string, splitKey: string, key: string, listed: unknown) {
  const labels: string[] = [];
  const index = new Map<string, number>();
  const names = Array.isArray(listed) ? (listed as unknown[]).map(labelOf) : [];
  for (const row of rows) {
    const label = labelOf(own(row, labelKey));
    if (!index.has(label)) {
      index.set(label, labels.length);
      labels.push(label);
    }
    const name = labelOf(own(row, splitKey));
    if (!names.includes(name)) names.push(name);
  }
  const series = names.map((name) => ({
    name,
    values: labels.map((): number | null => null),
  }));
  for (const row of rows) {
    const s = series[names.indexOf(labelOf(own(row, splitKey)))];
    const i = index.get(labelOf(own(row, labelKey)));
    if (s && i !== undefined) s.values[i] = numberOf(own(row, key));
  }
  return { labels, series };
}

/** Reads a field of an event: a top-level key first, else a dotted path through own properties. */
export function readField(json: unknown, field: string): unknown {
  if (typeof json !== 'object' || json === null) return null;
  if (Object.hasOwn(json, field)) return (json as Row)[field] ?? null;
  let at: unknown = json;
  for (const part of field.split('.')) {
    if (typeof at !== 'object' || at === null || !Object.hasOwn(at, part)) return null;
    at = (at as Row)[part];
  }
  return at ?? null;
}

function optionalNumber(value: unknown): number | null | undefined {
  if (value === undefined) return undefined;
  return numberOf(value);
}

/**
 * Turns the service's envelope into the chart payload: only labels, numbers, and for Samples and
 * Table the allowlisted columns. Pure: no clock, no I/O. Nothing of the query travels on (no
 * collection, filters, SQL or raw metadata); the graph type, zone and title are the only echoes.
 */
export function toChartPayload(
  envelope: Envelope,
  query: QueryRequest,
  definition: Pick<QueryDefinition, 'title' | 'fields' | 'seriesNames'>,
  context: TrimContext,
): ChartPayload {
  const result = rowsOf(envelope.result);
  const compareRows = envelope.compare_result ? rowsOf(envelope.compare_result) : undefined;
  const meta = envelope.metadata ?? {};
  const graph = query.graph_type;
  const payload: ChartPayload = {
    graph,
    timeZone: query.IANA_time_zone,
    labels: [],
    series: [],
    generatedAt: context.generatedAt,
    expiresAt: context.expiresAt,
  };
  if (definition.title) payload.title = definition.title;

  if (isSqlQuery(query)) {
    // Time series rows carry `timestamp` (the engine and the service rename the mapped column);
    // rows that kept the column's own name are read by it.
    const first = result[0];
    const labelKey = query.timestamp_column
      ? first && !Object.hasOwn(first, 'timestamp')
        ? query.timestamp_column
        : 'timestamp'
      : (query.label_column ?? 'label');
    const key = query.value_column ?? 'value';
    switch (query.graph_type) {
      case 'Single Line': {
        const { labels, series } = column(result, labelKey, valueKeyOf(result, key, [labelKey]));
        payload.labels = labels;
        payload.series = [series];
        break;
      }
      case 'Multi Line':
      case 'Stacked Line': {
        const split = query.split_column ?? '';
        const shaped =
          result[0] && Object.hasOwn(result[0], split)
            ? pivot(result, labelKey, split, key, meta.series)
            : wide(result, labelKey, wideNames(result, meta.series, labelKey));
        payload.labels = shaped.labels;
        payload.series = shaped.series;
        break;
      }
      case 'Single Value': {
        const k = valueKeyOf(result, key, [labelKey]);
        payload.value = numberOf(result[0] ? own(result[0], k) : null);
        break;
      }
      case 'Table': {
        // `metadata.columns` keeps the SELECT order, which object keys lose for numeric names.
        const listed = meta.columns;
        const keys =
          Array.isArray(listed) && listed.every((c) => typeof c === 'string')
            ? (listed as string[])
            : Object.keys(result[0] ?? {});
        const columns = definition.fields
          ? keys.filter((k) => definition.fields?.includes(k))
          : keys;
        payload.columns = columns;
        payload.rows = result.map((row) => columns.map((c) => own(row, c) ?? null));
        break;
      }
      default: {
        // Funnel, Bar Chart, Pie Chart: categories and one value each.
        const { labels, series } = column(result, labelKey, valueKeyOf(result, key, [labelKey]));
        payload.labels = labels;
        payload.series = [series];
      }
    }
  } else {
    const expected =
      query.graph_type === 'Ratio Line' ? 'Ratio' : valueKey(query.aggregation, query.metric);
    const split = query.split ?? '';
    switch (query.graph_type) {
      case 'Single Line':
      case 'Cumulative Line':
      case 'Ratio Line': {
        const key = valueKeyOf(result, expected, ['timestamp']);
        const main = column(result, 'timestamp', key);
        payload.labels = main.labels;
        payload.series = [main.series];
        if (compareRows) {
          const other = column(compareRows, 'timestamp', key);
          payload.compare = { labels: other.labels, series: [other.series] };
        }
        break;
      }
      case 'Multi Line':
      case 'Stacked Line': {
        const names = wideNames(result, meta.series, 'timestamp');
        const main = wide(result, 'timestamp', names);
        payload.labels = main.labels;
        payload.series = main.series;
        if (compareRows) payload.compare = wide(compareRows, 'timestamp', names);
        break;
      }
      case 'Compare Line': {
        const key = valueKeyOf(result, expected, ['timestamp']);
        const main = column(result, 'timestamp', key);
        const other = column(compareRows ?? [], 'timestamp', key);
        payload.labels = main.labels;
        payload.series = [
          { name: definition.seriesNames?.result ?? 'All', values: main.series.values },
        ];
        payload.compare = {
          labels: other.labels,
          series: [
            { name: definition.seriesNames?.compare ?? 'Compared', values: other.series.values },
          ],
        };
        break;
      }
      case 'Single Value': {
        const key = valueKeyOf(result, expected, []);
        payload.value = numberOf(result[0] ? own(result[0], key) : null);
        if (compareRows)
          payload.compareValue = numberOf(compareRows[0] ? own(compareRows[0], key) : null);
        break;
      }
      case 'Table': {
        const key = valueKeyOf(result, expected, [split]);
        payload.columns = [split, key];
        payload.rows = result.map((row) => [labelOf(own(row, split)), numberOf(own(row, key))]);
        break;
      }
      case 'Bar Chart':
      case 'Pie Chart': {
        const { labels, series } = column(result, split, valueKeyOf(result, expected, [split]));
        payload.labels = labels;
        payload.series = [series];
        break;
      }
      case 'Samples': {
        const fields = definition.fields ?? [];
        payload.columns = ['timestamp', ...fields];
        payload.rows = result.map((row) => [
          numberOf(own(row, 'timestamp')),
          ...fields.map((field) => readField(own(row, 'json'), field)),
        ]);
        break;
      }
    }
  }

  if (graph.endsWith('Line') && typeof meta.granularity === 'string') {
    payload.granularity = meta.granularity;
    const granularity = resolvedGranularity(meta.granularity);
    if (granularity && context.window && payload.labels.length > 0) {
      const incomplete = incompleteBuckets(context.window, granularity, payload.timeZone);
      if (incomplete.first || incomplete.last) payload.incomplete = incomplete;
    }
  }
  const combined = optionalNumber(meta.combined);
  if (combined !== undefined) payload.combined = combined;
  const compareCombined = optionalNumber(meta.compare_combined);
  if (compareCombined !== undefined) payload.compareCombined = compareCombined;
  if (context.window) payload.range = { start: context.window.start, end: context.window.end };
  if (meta.truncated === true) payload.truncated = true;
  return payload;
}
