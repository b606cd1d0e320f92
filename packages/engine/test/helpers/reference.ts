import {
  type Aggregation,
  type CollectionQuery,
  type Envelope,
  type FilterGroups,
  type FilterValue,
  isSqlQuery,
  LIMITS,
  parseQueryRequest,
  pickGranularity,
  type ResolvedGranularity,
  resolveWindows,
  type TimeWindow,
  valueKey,
} from '@analytics-chart/protocol';
import { wallRows } from './wall-clock.ts';

/**
 * An independent answer to a collection-mode query: a plain loop over the fixture events, with
 * rows found by walking the zone's wall clock as `Intl.DateTimeFormat` shows it (no offset
 * tables, no Temporal, no SQL). Tests compare the engine
 * over HTTP with this. It shares only the request parsing and window resolution of the protocol
 * package, which both sides take as given.
 */

export interface FixtureEvent {
  timestamp: number;
  /** The payload; a `bigint` stands for an integer token sent digit for digit. */
  json: Record<string, unknown>;
  /** Set where the payload is sent as this text (it holds a `bigint`, see {@link jsonText}). */
  text?: string;
}

/** JSON text of a value, each `bigint` written as its digits (an integer token of any size). */
export function jsonText(value: unknown, token: (v: bigint) => string = String): string {
  const tokens: string[] = [];
  const text = JSON.stringify(value, (_key, v) => {
    if (typeof v !== 'bigint') return v;
    tokens.push(token(v));
    return `\u0000${tokens.length - 1}`;
  });
  return text.replace(/"\\u0000(\d+)"/g, (_m, i: string) => tokens[Number(i)] as string);
}

/**
 * An integer token as ingest stores it: as JSON.stringify writes its nearest double where that
 * text denotes the same decimal (`10^308` → `1e+308`), else digit for digit.
 */
function storedToken(v: bigint): string {
  const text = JSON.stringify(Number(v));
  const [mantissa = '', exponent = '0'] = text.split(/e\+?/);
  const [whole = '', fraction = ''] = mantissa.split('.');
  const power = Number(exponent) - fraction.length;
  if (power < 0) return String(v);
  return BigInt(whole + fraction) * 10n ** BigInt(power) === v ? text : String(v);
}

type Row = Record<string, string | number | null>;

/** Paths deeper than this are only read split at every dot (the engine's typed depth). */
const TYPED_DEPTH = 6;

/**
 * A field's value in one event: of the key paths in the event that spell the field (keys may
 * contain dots), the one with the fewest keys that holds a value (not null, not an object), ties
 * going to longer keys from the left; a path of more than six keys only split at every dot.
 */
function valueAt(json: Record<string, unknown>, field: string): unknown {
  const found: Array<{ path: string[]; value: unknown }> = [];
  const walk = (object: Record<string, unknown>, rest: string, path: string[]) => {
    for (const key of Object.keys(object)) {
      const value = object[key];
      if (key === rest) found.push({ path: [...path, key], value });
      else if (rest.startsWith(`${key}.`) && isObject(value)) {
        walk(value, rest.slice(key.length + 1), [...path, key]);
      }
    }
  };
  walk(json, field, []);
  const allSplit = field.split('.').length;
  const held = found.filter(
    ({ path, value }) =>
      value !== null &&
      !isObject(value) &&
      (path.length <= TYPED_DEPTH || path.length === allSplit),
  );
  held.sort((a, b) => {
    if (a.path.length !== b.path.length) return a.path.length - b.path.length;
    for (let i = 0; i < a.path.length; i++) {
      const d = (b.path[i] as string).length - (a.path[i] as string).length;
      if (d !== 0) return d;
    }
    return 0;
  });
  return held[0]?.value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The string form: strings as they are, numbers and arrays as their JSON text (an integer token
 * as ingest stores it).
 */
function stringForm(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'bigint') return storedToken(value);
  if (typeof value === 'number' || Array.isArray(value)) return jsonText(value, storedToken);
  return null; // objects are not values
}

/**
 * The number rule: a JSON number, or a string that is a decimal number (sign, exponent,
 * surrounding white space), as the nearest double; none where that is beyond ±1.8e308.
 */
function numericForm(value: unknown): number | null {
  // Number() of a bigint is its nearest double.
  if (typeof value === 'bigint') value = Number(value);
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  if (!/^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(value)) return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

/**
 * A finite double as an exact decimal numeral: its IEEE bits read as mantissa · 2^exponent,
 * written as digits · 10^-1074 (2^-1074 = 5^1074 · 10^-1074).
 */
function exactUnits(x: number): bigint {
  const bits = new BigUint64Array(new Float64Array([x]).buffer)[0] as bigint;
  const biased = Number((bits >> 52n) & 2047n);
  const fraction = bits & ((1n << 52n) - 1n);
  const mantissa = biased === 0 ? fraction : fraction + (1n << 52n);
  const units = mantissa * 2n ** BigInt(biased === 0 ? 0 : biased - 1);
  return bits >> 63n === 1n ? -units : units;
}

const FIVE_1074 = 5n ** 1074n;

/**
 * The double nearest to `num / den` · 2^-1074, through its decimal text: JavaScript's Number()
 * rounds a decimal numeral correctly. Digits past the exact ones carry a final 1 when the
 * quotient is inexact, so a tie is never mistaken.
 */
function nearestDouble(num: bigint, den: bigint): number {
  if (num === 0n) return 0;
  const sign = num < 0n ? '-' : '';
  const magnitude = (num < 0n ? -num : num) * FIVE_1074 * 10n ** 40n;
  const digits = magnitude / den;
  const sticky = magnitude % den === 0n ? '' : '1';
  return Number(`${sign}${digits}${sticky}e-${1074 + 40 + sticky.length}`);
}

/** The exact sum rounded once (the number rule's Sum). */
export function exactSum(values: number[]): number {
  return nearestDouble(
    values.reduce((a, v) => a + exactUnits(v), 0n),
    1n,
  );
}

/** The exact sum over the count, rounded once (the number rule's Avg). */
export function mean(values: number[]): number | null {
  if (values.length === 0) return null;
  return nearestDouble(
    values.reduce((a, v) => a + exactUnits(v), 0n),
    BigInt(values.length),
  );
}

function filterText(v: FilterValue): string {
  return typeof v === 'string' ? v : String(v);
}

function filterNumber(v: FilterValue): number | null {
  return typeof v === 'boolean' ? null : numericForm(v);
}

function matches(event: FixtureEvent, groups: FilterGroups): boolean {
  if (groups.length === 0) return true;
  return groups.some((group) =>
    group.every(([field, op, v]) => {
      const value = valueAt(event.json, field);
      const s = stringForm(value);
      const n = numericForm(value);
      const eq = (s !== null && s === filterText(v)) || (n !== null && n === filterNumber(v));
      const inc = Array.isArray(value)
        ? value.map(stringForm).includes(filterText(v))
        : s?.includes(filterText(v));
      switch (op) {
        case '=':
          return eq;
        case '≠':
          return !eq;
        case 'includes':
          return inc;
        case 'excludes':
          return !inc;
        case '>':
          return n !== null && filterNumber(v) !== null && n > (filterNumber(v) as number);
        case '<':
          return n !== null && filterNumber(v) !== null && n < (filterNumber(v) as number);
      }
      return false;
    }),
  );
}

/** Linear interpolation between closest ranks (numpy's default, DuckDB's quantile_cont). */
export function quantile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  const [a, b, d] = [sorted[lo] as number, sorted[hi] as number, h - lo];
  const value = a + d * (b - a);
  // Where the ranks' distance overflows (±1.8e308 on both sides), weights instead.
  return Number.isFinite(value) ? value : a * (1 - d) + b * d;
}

const P: Record<string, number> = { P50: 0.5, P75: 0.75, P90: 0.9, P95: 0.95, P99: 0.99 };

function aggregate(
  events: FixtureEvent[],
  aggregation: Aggregation,
  metric: string | null,
): number | null {
  if (aggregation === 'Count') return events.length;
  const values = events
    .map((e) => numericForm(valueAt(e.json, metric ?? '')))
    .filter((n): n is number => n !== null);
  if (aggregation === 'Sum') return exactSum(values);
  if (aggregation === 'Avg') return mean(values);
  return quantile(values, P[aggregation] as number);
}

function inWindow(events: FixtureEvent[], w: TimeWindow): FixtureEvent[] {
  return events.filter((e) => w.start < e.timestamp && e.timestamp < w.end);
}

function empty(aggregation: Aggregation): number | null {
  return aggregation === 'Count' || aggregation === 'Sum' ? 0 : null;
}

/**
 * Parses a request body like the engine (api_key aside) and answers it from `events`, the
 * events of collection `collection`.
 */
export function referenceAnswer(
  events: FixtureEvent[],
  body: Record<string, unknown>,
  now: number,
  collection = 'all_events',
): Envelope {
  const { api_key: _key, ...rest } = body;
  const parsed = parseQueryRequest(rest);
  if (!parsed.ok || isSqlQuery(parsed.value))
    throw new Error(`reference: bad request ${JSON.stringify(body)}`);
  const q = parsed.value;
  const windows = resolveWindows(q, now);
  if (!windows.ok) throw new Error(windows.error);
  // Any other collection has no events.
  const all = q.collection === collection ? events : [];
  const pick = (w: TimeWindow, groups: FilterGroups) =>
    inWindow(all, w).filter((e) => matches(e, groups));
  const key = valueKey(q.aggregation, q.metric);
  const hide = q.customizations.hideMissing === true;

  if (q.graph_type === 'Single Value') {
    const one = (w: TimeWindow) => [
      { [key]: aggregate(pick(w, q.filters), q.aggregation, q.metric) ?? empty(q.aggregation) },
    ];
    const env: Envelope = { result: one(windows.value.window), metadata: {} };
    if (windows.value.compare) env.compare_result = one(windows.value.compare);
    return env;
  }
  if (q.graph_type === 'Table' || q.graph_type === 'Bar Chart' || q.graph_type === 'Pie Chart') {
    const cap =
      q.graph_type === 'Table'
        ? LIMITS.table
        : q.graph_type === 'Bar Chart'
          ? LIMITS.bar
          : LIMITS.pie;
    return {
      result: categories(pick(windows.value.window, q.filters), q, key).slice(0, cap),
      metadata: {},
    };
  }
  if (q.graph_type === 'Samples') {
    // Fixture order is ingest order; Descending is the exact reverse of Ascending. (Paging's
    // whole-second rule is not modelled: use windows of at most 50 events.)
    const chosen = pick(windows.value.window, q.filters)
      .map((e, i) => ({ e, i }))
      .sort((a, b) => a.e.timestamp - b.e.timestamp || a.i - b.i)
      .map(({ e }) => ({ timestamp: e.timestamp, json: e.json }));
    if (q.order !== 'Ascending') chosen.reverse();
    if (chosen.length > LIMITS.samples) throw new Error('reference: more than one page of Samples');
    return { result: chosen, metadata: {} };
  }

  const g = pickGranularity(q.granularity, windows.value.window);
  const series = (w: TimeWindow, fixed: string[] | null) =>
    timeSeries(q, all, w, g, key, hide, fixed);
  const main = series(windows.value.window, null);
  const env: Envelope = {
    result: main.rows,
    metadata: { granularity: g, combined: main.combined },
  };
  if (main.series) env.metadata.series = main.series;
  if (q.graph_type === 'Compare Line') {
    const other = timeSeries(
      { ...q, filters: andGroups(q.filters, q.compare_filters ?? []), graph_type: 'Single Line' },
      all,
      windows.value.window,
      g,
      key,
      hide,
      null,
    );
    env.compare_result = other.rows;
    env.metadata.compare_combined = other.combined;
  } else if (windows.value.compare) {
    const other = series(windows.value.compare, main.series ?? null);
    env.compare_result = other.rows;
    env.metadata.compare_combined = other.combined;
  }
  return env;
}

function andGroups(a: FilterGroups, b: FilterGroups): FilterGroups {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  return a.flatMap((x) => b.map((y) => [...x, ...y]));
}

function categories(events: FixtureEvent[], q: CollectionQuery, key: string): Row[] {
  const groups = new Map<string, FixtureEvent[]>();
  for (const e of events) {
    const s = stringForm(valueAt(e.json, q.split ?? ''));
    if (s === null) continue;
    groups.set(s, [...(groups.get(s) ?? []), e]);
  }
  const rows = [...groups].map(([name, list]) => ({
    name,
    value: aggregate(list, q.aggregation, q.metric) ?? empty(q.aggregation),
  }));
  rows.sort(byValueThenName);
  return rows.map((r) => ({ [q.split ?? '']: r.name, [key]: r.value }));
}

function byValueThenName(
  a: { name: string; value: number | null },
  b: { name: string; value: number | null },
): number {
  // Ties by name in UTF-8 byte order, as both databases order text.
  if (a.value === b.value) return Buffer.compare(Buffer.from(a.name), Buffer.from(b.name));
  if (a.value === null) return 1;
  if (b.value === null) return -1;
  return b.value - a.value;
}

function timeSeries(
  q: CollectionQuery,
  all: FixtureEvent[],
  w: TimeWindow,
  g: ResolvedGranularity,
  key: string,
  hide: boolean,
  fixedSeries: string[] | null,
): { rows: Row[]; combined: number | null; series?: string[] } {
  const { rows: buckets, rowOf } = wallRows(
    q.IANA_time_zone,
    g,
    Math.floor(w.start) + 1,
    Math.ceil(w.end) - 1,
  );
  const events = inWindow(all, w).filter((e) => matches(e, q.filters));
  const byBucket = buckets.map(() => [] as FixtureEvent[]);
  for (const e of events) {
    const i = rowOf(e.timestamp);
    if (i >= 0) byBucket[i]?.push(e);
  }
  const agg = (list: FixtureEvent[]) =>
    aggregate(list, q.aggregation, q.metric) ?? empty(q.aggregation);
  const rows: Row[] = [];

  if (q.graph_type === 'Multi Line' || q.graph_type === 'Stacked Line') {
    const withSplit = (list: FixtureEvent[]) =>
      list.filter((e) => stringForm(valueAt(e.json, q.split ?? '')) !== null);
    const nameOf = (e: FixtureEvent) => stringForm(valueAt(e.json, q.split ?? '')) as string;
    let series = fixedSeries;
    if (!series) {
      const byName = new Map<string, FixtureEvent[]>();
      for (const e of withSplit(events))
        byName.set(nameOf(e), [...(byName.get(nameOf(e)) ?? []), e]);
      series = [...byName]
        .map(([name, list]) => ({ name, value: aggregate(list, q.aggregation, q.metric) }))
        .sort(byValueThenName)
        .slice(0, LIMITS.series)
        .map((r) => r.name);
    }
    const top = series;
    buckets.forEach((b, i) => {
      const list = withSplit(byBucket[i] ?? []).filter((e) => top.includes(nameOf(e)));
      if (hide && list.length === 0) return;
      const row: Row = { timestamp: b.label };
      for (const name of top) row[name] = agg(list.filter((e) => nameOf(e) === name));
      rows.push(row);
    });
    return { rows, combined: agg(withSplit(events)), series: top };
  }

  if (q.graph_type === 'Ratio Line') {
    const num = (list: FixtureEvent[]) => list.filter((e) => matches(e, q.numerator_filters ?? []));
    const den = (list: FixtureEvent[]) =>
      list.filter((e) => matches(e, q.denominator_filters ?? []));
    const ratio = (list: FixtureEvent[]) => {
      const a = aggregate(num(list), q.aggregation, q.metric) ?? empty(q.aggregation);
      const b = aggregate(den(list), q.aggregation, q.metric) ?? empty(q.aggregation);
      return a === null || b === null || b === 0 ? null : a / b;
    };
    buckets.forEach((b, i) => {
      const list = byBucket[i] ?? [];
      if (hide && num(list).length + den(list).length === 0) return;
      rows.push({ timestamp: b.label, Ratio: ratio(list) });
    });
    return { rows, combined: ratio(events) };
  }

  if (q.graph_type === 'Cumulative Line') {
    const sofar: FixtureEvent[] = [];
    buckets.forEach((b, i) => {
      const list = byBucket[i] ?? [];
      sofar.push(...list);
      if (hide && list.length === 0) return;
      rows.push({ timestamp: b.label, [key]: agg(sofar) });
    });
    return { rows, combined: agg(events) };
  }

  buckets.forEach((b, i) => {
    const list = byBucket[i] ?? [];
    if (hide && list.length === 0) return;
    rows.push({ timestamp: b.label, [key]: agg(list) });
  });
  return { rows, combined: agg(events) };
}
