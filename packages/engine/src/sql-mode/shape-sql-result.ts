import {
  type Envelope,
  type EnvelopeMetadata,
  LIMITS,
  type SqlMappingField,
  type SqlQuery,
} from '@analytics-chart/protocol';
import { EngineError } from '../engine-error.ts';
import { setOwn, setSeriesValue } from '../set-own.ts';
import type { ResultCell, ResultColumn, ResultTable } from '../storage/result-table.ts';
import { compareText } from '../text-order.ts';
import {
  canHoldValues,
  isNumberKind,
  isTextKind,
  isTimeKind,
  toChartNumber,
  toJsonCell,
  toTimePoint,
} from './result-values.ts';
import { formatLabel, type LabelGranularity, labelFormat, type TimePoint } from './time-labels.ts';

/**
 * Shapes a SQL result into the envelope of its graph type, following the spec's mapping table:
 * Single Line rows `{timestamp, <value_column>}`; Multi and Stacked Line wide rows
 * `{timestamp, <series>…}` with `metadata.series`; Bar, Pie, Funnel and Single Value rows
 * `{<label_column>, <value_column>}`; Table rows as returned. Pure: no I/O, so it is tested by
 * table.
 */
export function shapeSqlResult(table: ResultTable, query: SqlQuery): Envelope {
  const zone = query.IANA_time_zone;
  const metadata: EnvelopeMetadata = { truncated: table.truncated };
  switch (query.graph_type) {
    case 'Table':
      return shapeTable(table, zone, metadata);
    case 'Single Line':
      return shapeLine(table, query, metadata, false);
    case 'Multi Line':
    case 'Stacked Line':
      return shapeLine(table, query, metadata, true);
    case 'Bar Chart':
    case 'Pie Chart':
    case 'Funnel':
    case 'Single Value':
      return shapeCategories(table, query, metadata);
  }
}

function clip(name: string): string {
  return name.length > 60 ? `${name.slice(0, 57)}...` : name;
}

/** The index of a mapped column: exact name first, then ignoring case as SQL identifiers do. */
function columnIndex(table: ResultTable, field: SqlMappingField, name: string | null): number {
  const wanted = name ?? '';
  const names = table.columns.map((column) => column.name);
  let index = names.indexOf(wanted);
  if (index < 0) {
    const matches = names
      .map((column, i) => (column.toLowerCase() === wanted.toLowerCase() ? i : -1))
      .filter((i) => i >= 0);
    if (matches.length === 1) index = matches[0] ?? -1;
  }
  if (index < 0) {
    const listed = names.slice(0, 20).map(clip).join(', ');
    const more = names.length > 20 ? ', ...' : '';
    throw new EngineError(
      400,
      `${field} '${clip(wanted)}' is not a column of the query's result (its columns: ${listed}${more})`,
    );
  }
  return index;
}

function columnAt(table: ResultTable, index: number): ResultColumn {
  return table.columns[index] as ResultColumn;
}

/** The chart values of a column, refusing columns that cannot hold numbers. */
function valuesOf(table: ResultTable, index: number, name: string): (number | null)[] {
  const column = columnAt(table, index);
  if (!canHoldValues(column.kind)) {
    throw new EngineError(
      400,
      `value_column '${clip(name)}' must hold numbers, but the query returns ${column.typeName} there`,
    );
  }
  return table.rows.map((row) => {
    const raw = row[index] ?? null;
    const value = toChartNumber(raw);
    if (value === null && typeof raw === 'string' && raw.trim() !== '') {
      throw new EngineError(
        400,
        `value_column '${clip(name)}' must hold numbers, but the query returns text there`,
      );
    }
    return value;
  });
}

/** Labels of a column: times in the request's zone, everything else as text. */
function labelsOf(
  table: ResultTable,
  index: number,
  zone: string,
): { labels: string[]; granularity?: LabelGranularity } {
  const { kind } = columnAt(table, index);
  if (isTimeKind(kind)) {
    const points = table.rows.map((row) => toTimePoint(row[index] ?? null, kind, zone));
    const granularity = labelFormat(points.filter((p): p is TimePoint => p !== null));
    const labels = points.map((point, i) =>
      point ? formatLabel(point.wall, granularity) : textOf(table.rows[i]?.[index] ?? null),
    );
    return { labels, granularity };
  }
  return { labels: table.rows.map((row) => textOf(row[index] ?? null)) };
}

function textOf(value: ResultCell): string {
  const cell = toJsonCell(value);
  if (cell === null) return 'null';
  return typeof cell === 'object' ? JSON.stringify(cell) : String(cell);
}

function shapeTable(table: ResultTable, zone: string, metadata: EnvelopeMetadata): Envelope {
  const columns = table.columns.map(({ kind }, index) => {
    if (isTimeKind(kind)) {
      const { labels } = labelsOf(table, index, zone);
      return (row: number) => (table.rows[row]?.[index] === null ? null : labels[row]);
    }
    return (row: number) => toJsonCell(table.rows[row]?.[index] ?? null, kind);
  });
  const names = table.columns.map((column) => column.name);
  const result = table.rows.map((_, row) => {
    const out: Record<string, unknown> = {};
    names.forEach((name, index) => {
      setOwn(out, name, columns[index]?.(row));
    });
    return out;
  });
  // Object keys that look like integers are reordered by JSON consumers; the list keeps the order.
  return { result, metadata: { ...metadata, columns: names } };
}

interface LinePoint {
  label: string;
  order: number | string;
}

/** The time axis of a line: instants and readings ordered in time, or text labels as given. */
function timeAxis(
  table: ResultTable,
  query: SqlQuery,
): { points: (LinePoint | null)[]; granularity?: LabelGranularity } {
  const index = columnIndex(table, 'timestamp_column', query.timestamp_column);
  const column = columnAt(table, index);
  const zone = query.IANA_time_zone;
  if (isTimeKind(column.kind) || isNumberKind(column.kind)) {
    const times = table.rows.map((row) => toTimePoint(row[index] ?? null, column.kind, zone));
    const granularity = labelFormat(times.filter((p): p is TimePoint => p !== null));
    const points = times.map((t) =>
      t ? { label: formatLabel(t.wall, granularity), order: t.order } : null,
    );
    return { points, granularity };
  }
  if (isTextKind(column.kind) || column.kind === 'null') {
    const points = table.rows.map((row) => {
      const value = row[index] ?? null;
      return typeof value === 'string' ? { label: value, order: value } : null;
    });
    return { points };
  }
  throw new EngineError(
    400,
    `timestamp_column '${clip(query.timestamp_column ?? '')}' must hold times (TIMESTAMP, DATE or Unix seconds), but the query returns ${column.typeName} there`,
  );
}

function compareOrder(a: number | string, b: number | string): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Adds b to a where either may be missing: rows for the same time and series are summed. */
function add(a: number | null | undefined, b: number | null): number | null {
  if (a === null || a === undefined) return b;
  return b === null ? a : a + b;
}

function shapeLine(
  table: ResultTable,
  query: SqlQuery,
  metadata: EnvelopeMetadata,
  split: boolean,
): Envelope {
  const valueIndex = columnIndex(table, 'value_column', query.value_column);
  const splitIndex = split ? columnIndex(table, 'split_column', query.split_column) : -1;
  const { points, granularity } = timeAxis(table, query);
  const values = valuesOf(table, valueIndex, query.value_column ?? '');
  const splits = split ? labelsOf(table, splitIndex, query.IANA_time_zone).labels : [];
  const valueKey = query.value_column ?? 'value';

  // One bucket per distinct time, in time order; rows of the same time (and series) are summed.
  const buckets = new Map<string, { point: LinePoint; values: Map<string, number | null> }>();
  const totals = new Map<string, number>();
  table.rows.forEach((row, i) => {
    const point = points[i];
    if (!point) return; // a row without a time cannot be placed on the axis
    if (split && row[splitIndex] === null) return; // as collection mode: no split value, no series
    const series = split ? (splits[i] ?? '') : valueKey;
    const key = `${typeof point.order}:${point.order}`;
    let bucket = buckets.get(key);
    if (!bucket) {
      bucket = { point, values: new Map() };
      buckets.set(key, bucket);
    }
    const value = values[i] ?? null;
    bucket.values.set(series, add(bucket.values.get(series), value));
    totals.set(series, (totals.get(series) ?? 0) + (value ?? 0));
  });
  const ordered = [...buckets.values()].sort((a, b) => compareOrder(a.point.order, b.point.order));
  if (granularity) metadata.granularity = granularity;

  if (!split) {
    const result = ordered.map((b) => ({
      timestamp: b.point.label,
      [valueKey]: b.values.get(valueKey) ?? null,
    }));
    return { result, metadata };
  }
  // The top series by combined value, as collection mode shows them.
  const series = [...totals.entries()]
    .sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]))
    .slice(0, LIMITS.series)
    .map(([name]) => name);
  const result = ordered.map((b) => {
    const row: Record<string, string | number | null> = { timestamp: b.point.label };
    for (const name of series) setSeriesValue(row, name, b.values.get(name) ?? null);
    return row;
  });
  return { result, metadata: { ...metadata, series } };
}

function shapeCategories(
  table: ResultTable,
  query: SqlQuery,
  metadata: EnvelopeMetadata,
): Envelope {
  const labelIndex = columnIndex(table, 'label_column', query.label_column);
  const valueIndex = columnIndex(table, 'value_column', query.value_column);
  const labelKey = query.label_column ?? 'label';
  const valueKey = query.value_column ?? 'value';
  const { labels } = labelsOf(table, labelIndex, query.IANA_time_zone);
  const values = valuesOf(table, valueIndex, valueKey);
  let result = table.rows.map((_, i) => ({
    [labelKey]: labels[i] ?? 'null',
    [valueKey]: values[i] ?? null,
  }));
  if (query.graph_type === 'Single Value') result = result.slice(0, 1);
  if (query.graph_type === 'Funnel') {
    metadata.conversion = funnelConversion(values, 'previous');
    metadata.overall_conversion = funnelConversion(values, 'first');
  }
  return { result, metadata };
}

/**
 * Conversion of each funnel step: against the previous step (`previous`, step-to-step) or the
 * first one (`first`, overall). The first step is 1; a step after a zero or missing one is null.
 */
export function funnelConversion(
  values: readonly (number | null)[],
  against: 'previous' | 'first',
): (number | null)[] {
  return values.map((value, i) => {
    if (i === 0) return values.length > 0 ? 1 : null;
    const base = against === 'first' ? values[0] : values[i - 1];
    if (base === null || base === undefined || base === 0 || value === null) return null;
    return value / base;
  });
}
