/**
 * The test's own reading of a query: the request the engine gets for a chart, and what a
 * correct chart of the engine's answer must show. Written from the Data Query API's envelope
 * shapes (docs/query-api.md, docs/query-semantics.md), independently of the edge's payload code and the element's
 * drawing code, so a bug in either shows up as a difference.
 */
import type { QueryDefinition, RangeOption } from '@analytics-chart/edge';

/** A chart as the viewer sees it: bucket or category labels and series, a number, or a table. */
export interface Drawing {
  graph: string;
  labels?: string[];
  series?: { name: string; values: (number | null)[] }[];
  value?: number | null;
  compareValue?: number | null;
  columns?: string[];
  rows?: unknown[][];
}

type Json = Record<string, unknown>;

function substitute(value: unknown, params: Readonly<Record<string, string>>): unknown {
  if (Array.isArray(value)) return value.map((item) => substitute(item, params));
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === '$param') {
      const name = String((value as Json).$param);
      if (!(name in params)) throw new Error(`no value for parameter ${name}`);
      return params[name];
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, params)]));
  }
  return value;
}

/**
 * The body to send the engine for a chart: the definition's query with its parameters filled in
 * (and, for SQL, given as the engine's `parameters`), the viewer's range applied, and, when the chart reported it, the exact window (Unix seconds)
 * it was computed for, so both answers cover the same events however much later we ask.
 */
export function engineRequest(
  definition: QueryDefinition,
  params: Readonly<Record<string, string>>,
  apiKey: string,
  options: {
    range?: RangeOption | undefined;
    window?: { start: number; end: number } | undefined;
  } = {},
): Json {
  let body = substitute(definition.query, params) as Json;
  if (options.range) {
    body = { ...body, start: options.range.start, end: options.range.end };
    if (options.range.granularity) body.granularity = options.range.granularity;
  }
  if (options.window && !body.sql_query) {
    body = { ...body, start: options.window.start, end: options.window.end };
  }
  if (typeof body.sql_query === 'string') {
    // SQL parameters ({tenant:String}) travel beside the SQL, for the engine to bind.
    const sql = body.sql_query;
    const used = Object.entries(params).filter(([name]) => sql.includes(`{${name}:`));
    if (used.length) body = { ...body, parameters: Object.fromEntries(used) };
  }
  return { ...body, api_key: apiKey };
}

/** The value key rows carry: `Count`, `Sum(price)`, `Ratio`, or SQL mode's value column. */
function valueKey(query: Json): string {
  if (typeof query.sql_query === 'string') return String(query.value_column);
  if (query.graph_type === 'Ratio Line') return 'Ratio';
  const aggregation = (query.aggregation as string | undefined) ?? 'Count';
  return aggregation === 'Count' ? 'Count' : `${aggregation}(${String(query.metric)})`;
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' ? value : null;
}

function dotted(json: Json, path: string): unknown {
  if (Object.hasOwn(json, path)) return json[path];
  let node: unknown = json;
  for (const part of path.split('.')) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Json)[part];
  }
  return node;
}

/** What a correct chart of `envelope` shows, by graph type. */
export function expectedDrawing(definition: QueryDefinition, envelope: Json): Drawing {
  const query = definition.query as Json;
  const graph = String(query.graph_type);
  const key = valueKey(query);
  const rows = (envelope.result ?? []) as Json[];
  const compareRows = envelope.compare_result as Json[] | undefined;
  const meta = (envelope.metadata ?? {}) as Json;
  switch (graph) {
    case 'Single Value':
      return {
        graph,
        value: numberOrNull(rows[0]?.[key]),
        ...(compareRows ? { compareValue: numberOrNull(compareRows[0]?.[key]) } : {}),
      };
    case 'Single Line':
    case 'Cumulative Line':
    case 'Ratio Line':
      return {
        graph,
        labels: rows.map((r) => String(r.timestamp)),
        series: [{ name: key, values: rows.map((r) => numberOrNull(r[key])) }],
      };
    case 'Compare Line':
      return {
        graph,
        labels: rows.map((r) => String(r.timestamp)),
        series: [
          {
            name: definition.seriesNames?.result ?? 'All',
            values: rows.map((r) => numberOrNull(r[key])),
          },
          {
            name: definition.seriesNames?.compare ?? 'Compared',
            values: (compareRows ?? []).map((r) => numberOrNull(r[key])),
          },
        ],
      };
    case 'Multi Line':
    case 'Stacked Line': {
      const names = (meta.series as string[] | undefined) ?? [];
      return {
        graph,
        labels: rows.map((r) => String(r.timestamp)),
        series: names.map((name) => ({ name, values: rows.map((r) => numberOrNull(r[name])) })),
      };
    }
    case 'Bar Chart':
    case 'Pie Chart':
    case 'Funnel': {
      const labelKey = String(query.sql_query ? query.label_column : query.split);
      return {
        graph,
        labels: rows.map((r) => String(r[labelKey])),
        series: [{ name: key, values: rows.map((r) => numberOrNull(r[key])) }],
      };
    }
    case 'Table': {
      const split = String(query.split);
      return { graph, columns: [split, key], rows: rows.map((r) => [r[split], r[key]]) };
    }
    case 'Samples': {
      const fields = definition.fields ?? [];
      return {
        graph,
        columns: ['timestamp', ...fields],
        rows: rows.map((r) => [r.timestamp, ...fields.map((f) => dotted(r.json as Json, f))]),
      };
    }
    default:
      throw new Error(`no expectation written for ${graph}`);
  }
}
