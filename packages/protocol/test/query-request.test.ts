import { describe, expect, it } from 'vitest';
import {
  type CollectionQuery,
  isSqlQuery,
  parseQueryRequest,
  type QueryRequest,
  type SqlQuery,
} from '../src/index.ts';

const window = { start: '7 days ago', end: 'now' };

function ok(body: unknown): QueryRequest {
  const result = parseQueryRequest(body);
  if (!result.ok) throw new Error(`expected success, got: ${result.error}`);
  return result.value;
}

function collection(body: Record<string, unknown>): CollectionQuery {
  const query = ok(body);
  if (isSqlQuery(query)) throw new Error('expected a collection query');
  return query;
}

function sql(body: Record<string, unknown>): SqlQuery {
  const query = ok(body);
  if (!isSqlQuery(query)) throw new Error('expected a SQL query');
  return query;
}

function error(body: unknown): string {
  const result = parseQueryRequest(body);
  if (result.ok) throw new Error('expected a failure');
  return result.error;
}

describe('collection mode: the smallest valid body of every graph type', () => {
  it.each([
    ['Samples', {}],
    ['Single Line', {}],
    ['Multi Line', { split: 'event' }],
    ['Stacked Line', { split: 'event' }],
    ['Cumulative Line', {}],
    ['Ratio Line', { numerator_filters: [['event', '=', 'signup']], denominator_filters: [] }],
    ['Compare Line', { compare_filters: [['plan', '=', 'pro']] }],
    ['Single Value', {}],
    ['Table', { split: 'country' }],
    ['Bar Chart', { split: 'country' }],
    ['Pie Chart', { split: 'country' }],
  ])('%s', (graph_type, extra) => {
    const query = collection({ graph_type, ...window, ...extra });
    expect(query.graph_type).toBe(graph_type);
  });

  it('applies every default', () => {
    expect(collection({ graph_type: 'Single Line', ...window })).toEqual({
      collection: 'all_events',
      IANA_time_zone: 'America/Los_Angeles',
      graph_type: 'Single Line',
      start: '7 days ago',
      end: 'now',
      filters: [],
      aggregation: 'Count',
      metric: null,
      split: null,
      granularity: 'Auto',
      compare: null,
      compare_filters: null,
      numerator_filters: null,
      denominator_filters: null,
      order: 'Descending',
      customizations: {},
    });
  });

  it('accepts the body a real client sends, nulls and all, and drops the key', () => {
    const query = collection({
      api_key: 'secret-key',
      aggregation: 'Count',
      collection: 'base',
      compare: null,
      end: 'now',
      filters: [['Event', '=', 'action_completed']],
      graph_type: 'Table',
      IANA_time_zone: 'Europe/London',
      metric: null,
      split: 'action_id',
      start: '03/14/2022 1:44 pm',
    });
    expect(query).toMatchObject({
      collection: 'base',
      IANA_time_zone: 'Europe/London',
      split: 'action_id',
      filters: [[['Event', '=', 'action_completed']]],
    });
    expect(JSON.stringify(query)).not.toContain('secret-key');
  });

  it('ignores unknown keys', () => {
    const query = collection({ graph_type: 'Single Line', ...window, colour: 'red', limit: 5 });
    expect(query).not.toHaveProperty('colour');
    expect(query).not.toHaveProperty('limit');
  });

  it('treats empty strings as "none" where clients send them', () => {
    const query = collection({
      graph_type: 'Single Line',
      ...window,
      metric: '',
      split: ' ',
      compare: '',
      collection: '',
    });
    expect(query).toMatchObject({
      metric: null,
      split: null,
      compare: null,
      collection: 'all_events',
    });
  });

  it('normalises words: case, Median, Average', () => {
    const query = collection({
      graph_type: 'single line',
      ...window,
      aggregation: 'median',
      metric: 'price',
      granularity: 'DAY',
      order: 'ascending',
    });
    expect(query).toMatchObject({
      graph_type: 'Single Line',
      aggregation: 'P50',
      granularity: 'Day',
      order: 'Ascending',
    });
    expect(
      collection({ graph_type: 'Single Value', ...window, aggregation: 'Average', metric: 'x' })
        .aggregation,
    ).toBe('Avg');
  });

  it.each(['P50', 'P75', 'P90', 'P95', 'P99', 'Sum', 'Avg'])('%s with a metric', (aggregation) => {
    expect(
      collection({ graph_type: 'Single Line', ...window, aggregation, metric: 'price' })
        .aggregation,
    ).toBe(aggregation);
  });

  it('keeps Unix seconds as numbers and digit strings', () => {
    const query = collection({ graph_type: 'Samples', start: 1700000000, end: '1700003600' });
    expect([query.start, query.end]).toEqual([1700000000, '1700003600']);
  });

  it('accepts compare on lines and Single Value', () => {
    expect(
      collection({ graph_type: 'Single Value', ...window, compare: '1 week ago' }).compare,
    ).toBe('1 week ago');
    expect(
      collection({ graph_type: 'Multi Line', ...window, split: 'e', compare: '7 days' }).compare,
    ).toBe('7 days');
  });

  it('keeps customizations, hideMissing included', () => {
    const query = collection({
      graph_type: 'Single Line',
      ...window,
      customizations: { hideMissing: true, color: '#f00' },
    });
    expect(query.customizations).toEqual({ hideMissing: true, color: '#f00' });
  });
});

describe('collection mode: one clear sentence for every mistake', () => {
  it.each([
    [{ ...window }, 'graph_type is required'],
    [{ graph_type: 7, ...window }, 'graph_type: expected graph type as a string'],
    [
      { graph_type: 'Funnel', ...window },
      "graph_type: unknown graph type 'Funnel'; expected one of Samples, Single Line, Multi Line, Stacked Line, Cumulative Line, Ratio Line, Compare Line, Single Value, Table, Bar Chart, Pie Chart",
    ],
    [{ graph_type: 'Single Line', end: 'now' }, 'start is required'],
    [{ graph_type: 'Single Line', start: 'now' }, 'end is required'],
    [
      { graph_type: 'Single Line', start: 'yesterdayy', end: 'now' },
      "start: could not parse 'yesterdayy' as a time",
    ],
    [
      { graph_type: 'Single Line', start: '7 days ago', end: false },
      'end: expected a time: now, "<N> <unit> ago", a date or Unix seconds',
    ],
    [
      { graph_type: 'Single Line', ...window, IANA_time_zone: 'Mars/Base' },
      "IANA_time_zone: unknown time zone 'Mars/Base'",
    ],
    [
      { graph_type: 'Single Line', ...window, IANA_time_zone: 5 },
      'IANA_time_zone: expected an IANA time zone name such as Europe/London',
    ],
    [
      { graph_type: 'Single Line', ...window, aggregation: 'Sum' },
      'metric: Sum needs a metric (the numeric field to aggregate)',
    ],
    [
      { graph_type: 'Single Value', ...window, aggregation: 'P95', metric: null },
      'metric: P95 needs a metric (the numeric field to aggregate)',
    ],
    [
      { graph_type: 'Single Line', ...window, aggregation: 'Max', metric: 'x' },
      "aggregation: unknown aggregation 'Max'; expected one of Count, Sum, Avg, P50, P75, P90, P95, P99",
    ],
    [{ graph_type: 'Multi Line', ...window }, 'split: Multi Line needs a split field'],
    [
      { graph_type: 'Stacked Line', ...window, split: null },
      'split: Stacked Line needs a split field',
    ],
    [{ graph_type: 'Table', ...window }, 'split: Table needs a split field'],
    [{ graph_type: 'Bar Chart', ...window }, 'split: Bar Chart needs a split field'],
    [{ graph_type: 'Pie Chart', ...window }, 'split: Pie Chart needs a split field'],
    [
      { graph_type: 'Ratio Line', ...window, denominator_filters: [] },
      'numerator_filters: Ratio Line needs numerator_filters',
    ],
    [
      { graph_type: 'Ratio Line', ...window, numerator_filters: [] },
      'denominator_filters: Ratio Line needs denominator_filters',
    ],
    [
      { graph_type: 'Compare Line', ...window },
      'compare_filters: Compare Line needs compare_filters',
    ],
    [
      { graph_type: 'Compare Line', ...window, compare_filters: [], compare: '1 week ago' },
      'compare: Compare Line compares two populations; it takes compare_filters, not compare',
    ],
    [
      { graph_type: 'Table', ...window, split: 'x', compare: '1 week ago' },
      'compare: Table has no time axis to compare; compare works with lines and Single Value',
    ],
    [
      { graph_type: 'Single Line', ...window, compare: 'last week' },
      'compare: could not parse \'last week\' as an offset; use "<N> <unit> ago" such as "1 week ago"',
    ],
    [
      { graph_type: 'Single Line', ...window, granularity: 'Fortnight' },
      "granularity: unknown granularity 'Fortnight'; expected one of Auto, Minute, Hour, Day, Week, Month",
    ],
    [
      { graph_type: 'Samples', ...window, order: 'Random' },
      "order: unknown order 'Random'; expected one of Ascending, Descending",
    ],
    [
      { graph_type: 'Single Line', ...window, metric: 42 },
      'metric: expected metric field as a string',
    ],
    [
      { graph_type: 'Single Line', ...window, collection: 'a\u0000b' },
      'collection: collection name contains control characters',
    ],
    [
      { graph_type: 'Single Line', ...window, customizations: { hideMissing: 'yes' } },
      'customizations.hideMissing: expected true or false',
    ],
    [
      { graph_type: 'Single Line', ...window, customizations: [] },
      'customizations: expected object, received array',
    ],
    [
      { graph_type: 'Single Line', ...window, filters: 'event = signup' },
      'filters: expected a list of filter conditions',
    ],
    [
      { graph_type: 'Single Line', ...window, filters: [['event', 'LIKE', 'x']] },
      "filters[0][1]: unknown operator 'LIKE'; use one of =, ≠ (or !=), includes, excludes, >, <",
    ],
    [
      { graph_type: 'Single Line', ...window, filters: [['event', '=']] },
      'filters[0]: expected a condition [field, operator, value], got 2 items',
    ],
    [
      { graph_type: 'Single Line', ...window, filters: [['', '=', 'x']] },
      'filters[0][0]: expected a field name',
    ],
    [
      { graph_type: 'Single Line', ...window, filters: [['event', '=', { a: 1 }]] },
      'filters[0][2]: expected a string, number or boolean value',
    ],
    [
      { graph_type: 'Single Line', ...window, filters: [['event', '=', null]] },
      'filters[0][2]: expected a string, number or boolean value',
    ],
    [
      { graph_type: 'Single Line', ...window, filters: [[['a', '=', 1]], [['b', '=']]] },
      'filters[1][0]: expected a condition [field, operator, value], got 2 items',
    ],
    [
      { graph_type: 'Single Line', ...window, filters: [[['a', '=', 1]], 'b'] },
      'filters[1]: expected a group of conditions',
    ],
    [
      { graph_type: 'Single Line', ...window, numerator_filters: [['a', '>']] },
      'numerator_filters[0]: expected a condition [field, operator, value], got 2 items',
    ],
    [
      {
        graph_type: 'Single Line',
        ...window,
        filters: Array.from({ length: 101 }, () => ['a', '=', 1]),
      },
      'filters: at most 100 conditions are allowed',
    ],
  ])('%j', (body, message) => {
    expect(error(body)).toBe(message);
  });

  it.each([
    [null, 'request body: expected a JSON object'],
    [[], 'request body: expected a JSON object'],
    ['{"graph_type":"Table"}', 'request body: expected a JSON object'],
    [42, 'request body: expected a JSON object'],
  ])('refuses a body that is %j', (body, message) => {
    expect(error(body)).toBe(message);
  });

  it('never answers with a dump of issues', () => {
    const message = error({ graph_type: 1, start: {}, end: [], filters: 'x', metric: 3 });
    expect(message.split('\n')).toHaveLength(1);
    expect(message).not.toMatch(/[{}[\]]"/);
  });
});

describe('filters', () => {
  const parse = (filters: unknown) =>
    collection({ graph_type: 'Samples', ...window, filters }).filters;

  it('turns a flat list into one AND group', () => {
    expect(
      parse([
        ['event', '=', 'signup'],
        ['price', '>', 10],
      ]),
    ).toEqual([
      [
        ['event', '=', 'signup'],
        ['price', '>', 10],
      ],
    ]);
  });

  it('keeps OR groups', () => {
    expect(
      parse([
        [['plan', '=', 'pro']],
        [
          ['plan', '=', 'team'],
          ['seats', '>', '5'],
        ],
      ]),
    ).toEqual([
      [['plan', '=', 'pro']],
      [
        ['plan', '=', 'team'],
        ['seats', '>', '5'],
      ],
    ]);
  });

  it('accepts != as ≠ and every operator', () => {
    expect(
      parse([
        ['a', '=', 1],
        ['b', '≠', 'x'],
        ['c', '!=', 'y'],
        ['d', 'includes', 'z'],
        ['e', 'excludes', 'w'],
        ['f', '>', 2],
        ['g', '<', '3'],
        ['h', '=', true],
      ]),
    ).toEqual([
      [
        ['a', '=', 1],
        ['b', '≠', 'x'],
        ['c', '≠', 'y'],
        ['d', 'includes', 'z'],
        ['e', 'excludes', 'w'],
        ['f', '>', 2],
        ['g', '<', '3'],
        ['h', '=', true],
      ],
    ]);
  });

  it('reads null and [] as no filter, and dotted paths as fields', () => {
    expect(parse(null)).toEqual([]);
    expect(parse([])).toEqual([]);
    expect(parse([['device.os', '=', 'iOS']])).toEqual([[['device.os', '=', 'iOS']]]);
  });
});

describe('SQL mode', () => {
  const text = 'SELECT 1';
  it.each([
    ['Single Line', { timestamp_column: 't', value_column: 'v' }],
    ['Multi Line', { timestamp_column: 't', value_column: 'v', split_column: 's' }],
    ['Stacked Line', { timestamp_column: 't', value_column: 'v', split_column: 's' }],
    ['Funnel', { label_column: 'l', value_column: 'v' }],
    ['Bar Chart', { label_column: 'l', value_column: 'v' }],
    ['Pie Chart', { label_column: 'l', value_column: 'v' }],
    ['Single Value', { label_column: 'l', value_column: 'v' }],
    ['Table', {}],
  ])('%s with its mappings', (graph_type, mappings) => {
    const query = sql({ sql_query: text, graph_type, ...mappings });
    expect(query).toMatchObject({
      sql_query: text,
      graph_type,
      IANA_time_zone: 'America/Los_Angeles',
      ...mappings,
    });
  });

  it('uses sql_query instead of the collection controls (rule 7)', () => {
    const query = sql({
      sql_query: text,
      graph_type: 'Table',
      collection: 'x',
      filters: 'not even valid',
      start: 'garbage',
    });
    expect(query).not.toHaveProperty('collection');
    expect(query).not.toHaveProperty('filters');
  });

  it('reads a null sql_query as collection mode', () => {
    expect(isSqlQuery(ok({ sql_query: null, graph_type: 'Single Value', ...window }))).toBe(false);
  });

  it.each([
    [
      { sql_query: text, graph_type: 'Single Line', value_column: 'v' },
      'timestamp_column: Single Line in SQL mode needs timestamp_column',
    ],
    [
      { sql_query: text, graph_type: 'Single Line', timestamp_column: 't' },
      'value_column: Single Line in SQL mode needs value_column',
    ],
    [
      { sql_query: text, graph_type: 'Multi Line', timestamp_column: 't', value_column: 'v' },
      'split_column: Multi Line in SQL mode needs split_column',
    ],
    [
      { sql_query: text, graph_type: 'Stacked Line', timestamp_column: 't', value_column: 'v' },
      'split_column: Stacked Line in SQL mode needs split_column',
    ],
    [
      { sql_query: text, graph_type: 'Funnel', value_column: 'v' },
      'label_column: Funnel in SQL mode needs label_column',
    ],
    [
      { sql_query: text, graph_type: 'Bar Chart', label_column: 'l' },
      'value_column: Bar Chart in SQL mode needs value_column',
    ],
    [
      { sql_query: text, graph_type: 'Pie Chart', value_column: 'v' },
      'label_column: Pie Chart in SQL mode needs label_column',
    ],
    [
      { sql_query: text, graph_type: 'Single Value', label_column: 'l', value_column: '' },
      'value_column: Single Value in SQL mode needs value_column',
    ],
    [
      { sql_query: text, graph_type: 'Samples' },
      "graph_type: unknown SQL graph type 'Samples'; expected one of Single Line, Multi Line, Stacked Line, Funnel, Bar Chart, Pie Chart, Single Value, Table",
    ],
    [{ sql_query: '   ', graph_type: 'Table' }, 'sql_query: expected a non-empty SQL query'],
    [{ sql_query: 42, graph_type: 'Table' }, 'sql_query: expected SQL text'],
    [{ sql_query: text }, 'graph_type is required'],
    [
      { sql_query: text, graph_type: 'Table', IANA_time_zone: 'Nowhere/Land' },
      "IANA_time_zone: unknown time zone 'Nowhere/Land'",
    ],
    [
      { sql_query: 'x'.repeat(100_001), graph_type: 'Table' },
      'sql_query: SQL is longer than 100000 characters',
    ],
  ])('%j', (body, message) => {
    expect(error(body)).toBe(message);
  });
});
