import { type Envelope, parseQueryRequest, type QueryRequest } from '@analytics-chart/protocol';
import { describe, expect, it } from 'vitest';
import { readField, toChartPayload, wholeSecondWindow } from '../src/payload/to-chart-payload.ts';
import type { QueryDefinition } from '../src/registry/query-definition.ts';

const context = {
  generatedAt: '2024-03-05T12:00:00.000Z',
  expiresAt: '2024-03-05T12:01:00.000Z',
  window: { start: 1709000000, end: 1709600000 },
};
const common = {
  timeZone: 'Europe/Berlin',
  generatedAt: context.generatedAt,
  expiresAt: context.expiresAt,
  range: context.window,
};

function q(body: Record<string, unknown>): QueryRequest {
  const parsed = parseQueryRequest({
    IANA_time_zone: 'Europe/Berlin',
    start: '7 days ago',
    end: 'now',
    ...body,
  });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

// Secret-looking details every query below carries; none may appear in any payload.
const COLLECTION = 'secret_collection_x';
const FILTER_VALUE = 'secret-tenant-filter';

interface Case {
  name: string;
  query: Record<string, unknown>;
  envelope: Envelope;
  definition?: Pick<QueryDefinition, 'title' | 'fields' | 'seriesNames'>;
  expected: Record<string, unknown>;
}

const filters = [['tenant', '=', FILTER_VALUE]];

const cases: Case[] = [
  {
    name: 'Single Line',
    query: { graph_type: 'Single Line', collection: COLLECTION, filters },
    envelope: {
      result: [
        { timestamp: '2024-03-01', Count: 3 },
        { timestamp: '2024-03-02', Count: 0 },
      ],
      metadata: { granularity: 'Day', combined: 3, internal_plan: 'x' },
    },
    definition: { title: 'Signups' },
    expected: {
      graph: 'Single Line',
      title: 'Signups',
      granularity: 'Day',
      labels: ['2024-03-01', '2024-03-02'],
      series: [{ name: 'Count', values: [3, 0] }],
      combined: 3,
    },
  },
  {
    name: 'Single Line with compare',
    query: {
      graph_type: 'Single Line',
      aggregation: 'Sum',
      metric: 'price',
      compare: '1 week ago',
      collection: COLLECTION,
    },
    envelope: {
      result: [{ timestamp: '2024-03-08', 'Sum(price)': 10.5 }],
      compare_result: [{ timestamp: '2024-03-01', 'Sum(price)': 7 }],
      metadata: { granularity: 'Day', combined: 10.5, compare_combined: 7 },
    },
    expected: {
      graph: 'Single Line',
      granularity: 'Day',
      labels: ['2024-03-08'],
      series: [{ name: 'Sum(price)', values: [10.5] }],
      compare: { labels: ['2024-03-01'], series: [{ name: 'Sum(price)', values: [7] }] },
      combined: 10.5,
      compareCombined: 7,
    },
  },
  {
    name: 'Cumulative Line',
    query: {
      graph_type: 'Cumulative Line',
      aggregation: 'Avg',
      metric: 'ms',
      collection: COLLECTION,
    },
    envelope: {
      result: [
        { timestamp: '2024-03-01 10:00', 'Avg(ms)': null },
        { timestamp: '2024-03-01 11:00', 'Avg(ms)': 12.5 },
      ],
      metadata: { granularity: 'Hour', combined: 12.5 },
    },
    expected: {
      graph: 'Cumulative Line',
      granularity: 'Hour',
      labels: ['2024-03-01 10:00', '2024-03-01 11:00'],
      series: [{ name: 'Avg(ms)', values: [null, 12.5] }],
      combined: 12.5,
    },
  },
  {
    name: 'Ratio Line',
    query: {
      graph_type: 'Ratio Line',
      numerator_filters: [['plan', '=', 'pro']],
      denominator_filters: [],
      collection: COLLECTION,
    },
    envelope: {
      result: [
        { timestamp: '2024-03', Ratio: 0.25 },
        { timestamp: '2024-04', Ratio: null },
      ],
      metadata: { granularity: 'Month', combined: 0.25 },
    },
    expected: {
      graph: 'Ratio Line',
      granularity: 'Month',
      labels: ['2024-03', '2024-04'],
      series: [{ name: 'Ratio', values: [0.25, null] }],
      combined: 0.25,
    },
  },
  {
    name: 'Multi Line (series order from metadata)',
    query: { graph_type: 'Multi Line', split: 'country', collection: COLLECTION, filters },
    envelope: {
      result: [
        { timestamp: '2024-03-01', DE: 1, FR: 4 },
        { timestamp: '2024-03-02', DE: 0, FR: 2 },
      ],
      metadata: { granularity: 'Day', combined: 7, series: ['FR', 'DE'] },
    },
    expected: {
      graph: 'Multi Line',
      granularity: 'Day',
      labels: ['2024-03-01', '2024-03-02'],
      series: [
        { name: 'FR', values: [4, 2] },
        { name: 'DE', values: [1, 0] },
      ],
      combined: 7,
    },
  },
  {
    name: 'Stacked Line (no metadata series: row keys in order; a missing key is null)',
    query: { graph_type: 'Stacked Line', split: 'os', collection: COLLECTION },
    envelope: {
      result: [
        { timestamp: '2024-03-01', ios: 2 },
        { timestamp: '2024-03-02', ios: 1, android: 5 },
      ],
      metadata: { granularity: 'Day' },
    },
    expected: {
      graph: 'Stacked Line',
      granularity: 'Day',
      labels: ['2024-03-01', '2024-03-02'],
      series: [
        { name: 'ios', values: [2, 1] },
        { name: 'android', values: [null, 5] },
      ],
    },
  },
  {
    name: 'Multi Line with compare',
    query: { graph_type: 'Multi Line', split: 'os', compare: '1 day ago', collection: COLLECTION },
    envelope: {
      result: [{ timestamp: '2024-03-02', ios: 2, web: 3 }],
      compare_result: [{ timestamp: '2024-03-01', ios: 1, web: 0 }],
      metadata: { granularity: 'Day', series: ['web', 'ios'] },
    },
    expected: {
      graph: 'Multi Line',
      granularity: 'Day',
      labels: ['2024-03-02'],
      series: [
        { name: 'web', values: [3] },
        { name: 'ios', values: [2] },
      ],
      compare: {
        labels: ['2024-03-01'],
        series: [
          { name: 'web', values: [0] },
          { name: 'ios', values: [1] },
        ],
      },
    },
  },
  {
    name: 'Compare Line (names from the definition)',
    query: {
      graph_type: 'Compare Line',
      compare_filters: [['plan', '=', 'pro']],
      collection: COLLECTION,
    },
    envelope: {
      result: [
        { timestamp: '2024-03-01', Count: 10 },
        { timestamp: '2024-03-02', Count: 8 },
      ],
      compare_result: [
        { timestamp: '2024-03-01', Count: 4 },
        { timestamp: '2024-03-02', Count: 1 },
      ],
      metadata: { granularity: 'Day', combined: 18, compare_combined: 5 },
    },
    definition: { seriesNames: { result: 'Everyone', compare: 'Pro' } },
    expected: {
      graph: 'Compare Line',
      granularity: 'Day',
      labels: ['2024-03-01', '2024-03-02'],
      series: [{ name: 'Everyone', values: [10, 8] }],
      compare: { labels: ['2024-03-01', '2024-03-02'], series: [{ name: 'Pro', values: [4, 1] }] },
      combined: 18,
      compareCombined: 5,
    },
  },
  {
    name: 'Compare Line (default names)',
    query: { graph_type: 'Compare Line', compare_filters: [['plan', '=', 'pro']] },
    envelope: {
      result: [{ timestamp: '2024-03-01', Count: 2 }],
      compare_result: [{ timestamp: '2024-03-01', Count: 1 }],
      metadata: { granularity: 'Day' },
    },
    expected: {
      graph: 'Compare Line',
      granularity: 'Day',
      labels: ['2024-03-01'],
      series: [{ name: 'All', values: [2] }],
      compare: { labels: ['2024-03-01'], series: [{ name: 'Compared', values: [1] }] },
    },
  },
  {
    name: 'Single Value with compare',
    query: {
      graph_type: 'Single Value',
      aggregation: 'P95',
      metric: 'ms',
      compare: '1 week ago',
      collection: COLLECTION,
    },
    envelope: {
      result: [{ 'P95(ms)': 240 }],
      compare_result: [{ 'P95(ms)': 310 }],
      metadata: { combined: 240, compare_combined: 310 },
    },
    expected: {
      graph: 'Single Value',
      labels: [],
      series: [],
      value: 240,
      compareValue: 310,
      combined: 240,
      compareCombined: 310,
    },
  },
  {
    name: 'Single Value of nothing',
    query: { graph_type: 'Single Value', aggregation: 'Avg', metric: 'ms' },
    envelope: { result: [{ 'Avg(ms)': null }], metadata: {} },
    expected: { graph: 'Single Value', labels: [], series: [], value: null },
  },
  {
    name: 'Table',
    query: { graph_type: 'Table', split: 'page', collection: COLLECTION, filters },
    envelope: {
      result: [
        { page: '/home', Count: 9 },
        { page: '/pricing', Count: 4 },
      ],
      metadata: {},
    },
    expected: {
      graph: 'Table',
      labels: [],
      series: [],
      columns: ['page', 'Count'],
      rows: [
        ['/home', 9],
        ['/pricing', 4],
      ],
    },
  },
  {
    name: 'Bar Chart',
    query: {
      graph_type: 'Bar Chart',
      split: 'country',
      aggregation: 'Sum',
      metric: 'amount',
      collection: COLLECTION,
    },
    envelope: {
      result: [
        { country: 'DE', 'Sum(amount)': 120 },
        { country: 'FR', 'Sum(amount)': 80.5 },
      ],
      metadata: {},
    },
    expected: {
      graph: 'Bar Chart',
      labels: ['DE', 'FR'],
      series: [{ name: 'Sum(amount)', values: [120, 80.5] }],
    },
  },
  {
    name: 'Pie Chart',
    query: { graph_type: 'Pie Chart', split: 'browser', collection: COLLECTION },
    envelope: { result: [{ browser: 'Firefox', Count: 2 }], metadata: {} },
    expected: { graph: 'Pie Chart', labels: ['Firefox'], series: [{ name: 'Count', values: [2] }] },
  },
  {
    name: 'Samples (allowlisted fields only, dotted paths, missing → null)',
    query: { graph_type: 'Samples', collection: COLLECTION, filters },
    envelope: {
      result: [
        {
          timestamp: 1709300000,
          json: {
            event: 'signup',
            email: 'secret@example.com',
            user: { plan: 'pro', card: '4242' },
          },
        },
        { timestamp: 1709200000, json: { event: 'login', 'user.plan': 'free' } },
      ],
      metadata: {},
    },
    definition: { fields: ['event', 'user.plan'] },
    expected: {
      graph: 'Samples',
      labels: [],
      series: [],
      columns: ['timestamp', 'event', 'user.plan'],
      rows: [
        [1709300000, 'signup', 'pro'],
        [1709200000, 'login', 'free'],
      ],
    },
  },
  {
    name: 'SQL Single Line',
    query: {
      sql_query: `SELECT 1 FROM ${COLLECTION}`,
      graph_type: 'Single Line',
      timestamp_column: 'day',
      value_column: 'n',
    },
    envelope: {
      result: [
        { day: '2024-03-01', n: 5 },
        { day: '2024-03-02', n: '7' },
      ],
      metadata: {},
    },
    expected: {
      graph: 'Single Line',
      labels: ['2024-03-01', '2024-03-02'],
      series: [{ name: 'n', values: [5, 7] }],
    },
  },
  {
    name: 'SQL Single Line (rows with timestamp, as the engine shapes them; granularity kept)',
    query: {
      sql_query: `SELECT 1 FROM ${COLLECTION}`,
      graph_type: 'Single Line',
      timestamp_column: 'day',
      value_column: 'n',
    },
    envelope: {
      result: [{ timestamp: '2024-03-01', n: 5 }],
      metadata: { granularity: 'Day', truncated: false },
    },
    expected: {
      graph: 'Single Line',
      granularity: 'Day',
      labels: ['2024-03-01'],
      series: [{ name: 'n', values: [5] }],
    },
  },
  {
    name: 'SQL Multi Line (long rows are pivoted)',
    query: {
      sql_query: `SELECT 1 FROM ${COLLECTION}`,
      graph_type: 'Multi Line',
      timestamp_column: 'day',
      value_column: 'n',
      split_column: 'os',
    },
    envelope: {
      result: [
        { day: '2024-03-01', os: 'ios', n: 1 },
        { day: '2024-03-01', os: 'web', n: 2 },
        { day: '2024-03-02', os: 'web', n: 3 },
      ],
      metadata: {},
    },
    expected: {
      graph: 'Multi Line',
      labels: ['2024-03-01', '2024-03-02'],
      series: [
        { name: 'ios', values: [1, null] },
        { name: 'web', values: [2, 3] },
      ],
    },
  },
  {
    name: 'SQL Stacked Line (already wide rows)',
    query: {
      sql_query: `SELECT 1 FROM ${COLLECTION}`,
      graph_type: 'Stacked Line',
      timestamp_column: 'timestamp',
      value_column: 'n',
      split_column: 'os',
    },
    envelope: {
      result: [{ timestamp: '2024-03-01', ios: 1, web: 2 }],
      metadata: { series: ['web', 'ios'] },
    },
    expected: {
      graph: 'Stacked Line',
      labels: ['2024-03-01'],
      series: [
        { name: 'web', values: [2] },
        { name: 'ios', values: [1] },
      ],
    },
  },
  {
    name: 'SQL Funnel',
    query: {
      sql_query: `SELECT 1 FROM ${COLLECTION}`,
      graph_type: 'Funnel',
      label_column: 'step',
      value_column: 'users',
    },
    envelope: {
      result: [
        { step: 'visit', users: 100 },
        { step: 'signup', users: 20 },
        { step: 'pay', users: 5 },
      ],
      metadata: {},
    },
    expected: {
      graph: 'Funnel',
      labels: ['visit', 'signup', 'pay'],
      series: [{ name: 'users', values: [100, 20, 5] }],
    },
  },
  {
    name: 'SQL Bar Chart',
    query: {
      sql_query: `SELECT 1 FROM ${COLLECTION}`,
      graph_type: 'Bar Chart',
      label_column: 'c',
      value_column: 'v',
    },
    envelope: { result: [{ c: 'x', v: 1 }], metadata: {} },
    expected: { graph: 'Bar Chart', labels: ['x'], series: [{ name: 'v', values: [1] }] },
  },
  {
    name: 'SQL Pie Chart',
    query: {
      sql_query: `SELECT 1 FROM ${COLLECTION}`,
      graph_type: 'Pie Chart',
      label_column: 'c',
      value_column: 'v',
    },
    envelope: {
      result: [
        { c: 'a', v: 3 },
        { c: 'b', v: 1 },
      ],
      metadata: {},
    },
    expected: { graph: 'Pie Chart', labels: ['a', 'b'], series: [{ name: 'v', values: [3, 1] }] },
  },
  {
    name: 'SQL Single Value',
    query: {
      sql_query: `SELECT 1 FROM ${COLLECTION}`,
      graph_type: 'Single Value',
      label_column: 'k',
      value_column: 'total',
    },
    envelope: { result: [{ k: 'all', total: 42 }], metadata: {} },
    expected: { graph: 'Single Value', labels: [], series: [], value: 42 },
  },
  {
    name: 'SQL Table (columns from the first row; truncated flag kept)',
    query: { sql_query: `SELECT 1 FROM ${COLLECTION}`, graph_type: 'Table' },
    envelope: {
      result: [
        { name: 'a', n: 1 },
        { name: 'b', n: 2 },
      ],
      metadata: { truncated: true },
    },
    expected: {
      graph: 'Table',
      labels: [],
      series: [],
      columns: ['name', 'n'],
      rows: [
        ['a', 1],
        ['b', 2],
      ],
      truncated: true,
    },
  },
  {
    name: 'SQL Table (column order from metadata.columns)',
    query: { sql_query: `SELECT 1 FROM ${COLLECTION}`, graph_type: 'Table' },
    envelope: {
      result: [{ 2024: 5, name: 'a' }],
      metadata: { columns: ['name', '2024'], truncated: false },
    },
    expected: {
      graph: 'Table',
      labels: [],
      series: [],
      columns: ['name', '2024'],
      rows: [['a', 5]],
    },
  },
  {
    name: 'SQL Table with fields (only allowlisted columns)',
    query: { sql_query: `SELECT 1 FROM ${COLLECTION}`, graph_type: 'Table' },
    envelope: { result: [{ name: 'a', email: 'secret@example.com', n: 1 }], metadata: {} },
    definition: { fields: ['n', 'name'] },
    expected: { graph: 'Table', labels: [], series: [], columns: ['name', 'n'], rows: [['a', 1]] },
  },
];

describe('toChartPayload', () => {
  it.each(cases)('$name', ({ query, envelope, definition, expected }) => {
    const parsed = q(query);
    const payload = toChartPayload(envelope, parsed, definition ?? {}, context);
    const sql = 'sql_query' in query;
    // The fixture window runs from 2024-02-27 03:13:20 to 2024-03-05 01:53:20 Berlin time (CET):
    // it starts and ends inside a day, so every time series flags both end buckets.
    const incomplete = 'granularity' in expected ? { incomplete: { first: true, last: true } } : {};
    expect(payload).toEqual({
      ...common,
      ...(sql ? { range: context.window } : {}),
      ...incomplete,
      ...expected,
    });
    const text = JSON.stringify(payload);
    for (const secret of [
      COLLECTION,
      FILTER_VALUE,
      'secret@example.com',
      '4242',
      'SELECT',
      'internal_plan',
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  it('covers every graph type of both modes', () => {
    const collection = new Set(
      cases.filter((c) => !('sql_query' in c.query)).map((c) => c.query.graph_type),
    );
    const sql = new Set(cases.filter((c) => 'sql_query' in c.query).map((c) => c.query.graph_type));
    expect([...collection].sort()).toEqual(
      [
        'Bar Chart',
        'Compare Line',
        'Cumulative Line',
        'Multi Line',
        'Pie Chart',
        'Ratio Line',
        'Samples',
        'Single Line',
        'Single Value',
        'Stacked Line',
        'Table',
      ].sort(),
    );
    expect([...sql].sort()).toEqual(
      [
        'Bar Chart',
        'Funnel',
        'Multi Line',
        'Pie Chart',
        'Single Line',
        'Single Value',
        'Stacked Line',
        'Table',
      ].sort(),
    );
  });

  it('flags only the end buckets the window cuts', () => {
    const line = (window: { start: number; end: number }, granularity = 'Day') =>
      toChartPayload(
        { result: [{ timestamp: 'a', Count: 1 }], metadata: { granularity } },
        q({ graph_type: 'Single Line' }),
        {},
        { ...context, window },
      ).incomplete;
    // Berlin midnights (CET, UTC+1): 2024-03-01 00:00 = 2024-02-29T23:00Z, 03-05 = 03-04T23:00Z.
    const march1 = Date.UTC(2024, 1, 29, 23) / 1000;
    const march5 = Date.UTC(2024, 2, 4, 23) / 1000;
    expect(line({ start: march1, end: march5 })).toBeUndefined();
    expect(line({ start: march1, end: march5 + 3600 * 13.5 })).toEqual({
      first: false,
      last: true,
    });
    expect(line({ start: march1 + 60, end: march5 })).toEqual({ first: true, last: false });
    // Whole hours are whole Hour buckets, though they cut days.
    expect(line({ start: march1 + 3600, end: march5 + 7200 }, 'Hour')).toBeUndefined();
  });

  it('leaves range out when the window is unknown', () => {
    const payload = toChartPayload(
      { result: [], metadata: {} },
      q({ graph_type: 'Single Line' }),
      {},
      {
        generatedAt: context.generatedAt,
        expiresAt: context.expiresAt,
      },
    );
    expect(payload).not.toHaveProperty('range');
    expect(payload.labels).toEqual([]);
    expect(payload.series).toEqual([{ name: 'Count', values: [] }]);
  });

  it('reads fields through own properties only', () => {
    expect(readField({ a: { b: 1 } }, 'a.b')).toBe(1);
    expect(readField({ a: { b: 1 } }, 'a.c')).toBeNull();
    expect(readField({}, '__proto__.constructor')).toBeNull();
    expect(readField({ 'a.b': 2, a: { b: 1 } }, 'a.b')).toBe(2);
    expect(readField('not an object', 'x')).toBeNull();
  });
});

describe('wholeSecondWindow', () => {
  /** The whole seconds strictly inside a window, counted one by one. */
  const secondsInside = (start: number, end: number) => {
    const out: number[] = [];
    for (let t = Math.floor(start) - 2; t <= Math.ceil(end) + 2; t++) {
      if (t > start && t < end) out.push(t);
    }
    return out;
  };

  it.each([
    ['fractional ends (a window ending now)', 1000.25, 1010.75],
    ['whole-second ends (calendar bounds)', 1000, 1010],
    ['a fractional start, a whole end', 999.999, 1010],
    ['a whole start, a fractional end', 1000, 1009.001],
  ])('%s: holds exactly the same whole seconds', (_, start, end) => {
    const whole = wholeSecondWindow({ start, end });
    expect(Number.isInteger(whole.start) && Number.isInteger(whole.end)).toBe(true);
    expect(secondsInside(whole.start, whole.end)).toEqual(secondsInside(start, end));
  });
});
