import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MAX_SPLIT_CELLS } from '../src/collection/plan/split-series.ts';
import { API_KEY, ingest, startServer, type TestServer } from './helpers/engine-server.ts';
import { expectClose } from './helpers/expect-close.ts';
import { fixtureEvents, NOW } from './helpers/fixture-events.ts';
import { type FixtureEvent, referenceAnswer } from './helpers/reference.ts';

/**
 * Every collection-mode graph type, aggregation, granularity and filter operator, answered by
 * the engine over HTTP and by an independent loop over the same events (helpers/reference.ts).
 */

let server: TestServer;
const events: FixtureEvent[] = fixtureEvents();

beforeAll(async () => {
  // Every body here is small enough to be parsed inline: the engine (and each restart) starts no body workers.
  server = await startServer({ now: () => NOW, bodyWorkers: 0 });
  await ingest(server, events);
  // On ClickHouse the fixture's 1,613 requests share a few dozen inserts (the group commit).
}, 240_000);

afterAll(async () => {
  await server?.close();
});

async function check(body: Record<string, unknown>) {
  return checkIn(events, undefined, body);
}

/** The engine's answer over HTTP, checked against the reference over `list` (in `collection`). */
async function checkIn(list: FixtureEvent[], collection: string | undefined, body: object) {
  const request = { api_key: API_KEY, ...(collection ? { collection } : {}), ...body };
  const answer = await server.post('/api/visualize/data', request);
  if (answer.status !== 200)
    expect.fail(`${answer.status}: ${answer.text} for ${JSON.stringify(body)}`);
  expectClose(answer.body, referenceAnswer(list, request, NOW, collection));
  return answer.body;
}

const AGGREGATIONS = [
  { aggregation: 'Count' },
  { aggregation: 'Sum', metric: 'price' },
  { aggregation: 'Avg', metric: 'price' },
  { aggregation: 'P50', metric: 'price' },
  { aggregation: 'Median', metric: 'price' },
  { aggregation: 'P75', metric: 'price' },
  { aggregation: 'P90', metric: 'device.version' },
  { aggregation: 'P95', metric: 'price' },
  { aggregation: 'P99', metric: 'code' },
];

const ZONES = [
  'America/Los_Angeles',
  'Europe/London',
  'UTC',
  'Asia/Kolkata',
  'Australia/Lord_Howe',
];

describe('aggregations on every time-series graph type', () => {
  for (const graph_type of ['Single Line', 'Cumulative Line', 'Multi Line', 'Stacked Line']) {
    for (const agg of AGGREGATIONS) {
      test(`${graph_type} ${agg.aggregation}`, async () => {
        const body = await check({
          graph_type,
          ...agg,
          split: graph_type.includes('Multi') || graph_type.includes('Stacked') ? 'country' : null,
          start: '30 days ago',
          end: 'now',
          IANA_time_zone: 'America/Los_Angeles',
        });
        expect(body.result.length).toBeGreaterThan(25);
      });
    }
  }
});

describe('granularities in several zones', () => {
  const windows: Record<string, [string, string]> = {
    Minute: ['2 hours ago', 'now'],
    Hour: ['2 days ago', 'now'],
    Day: ['60 days ago', 'now'],
    Week: ['6 months ago', 'now'],
    Month: ['2 years ago', 'now'],
  };
  for (const zone of ZONES) {
    for (const [granularity, [start, end]] of Object.entries(windows)) {
      test(`${granularity} in ${zone}`, async () => {
        await check({ graph_type: 'Single Line', granularity, start, end, IANA_time_zone: zone });
      });
    }
  }
  for (const [start, end, expected] of [
    ['2 hours ago', 'now', 'Minute'],
    ['3 hours ago', 'now', 'Minute'],
    ['2 days ago', 'now', 'Hour'],
    ['3 days ago', 'now', 'Hour'],
    ['30 days ago', 'now', 'Day'],
    ['92 days ago', 'now', 'Day'],
    ['6 months ago', 'now', 'Week'],
    ['366 days ago', 'now', 'Week'],
    ['2 years ago', 'now', 'Month'],
  ] as const) {
    test(`Auto over ${start} is ${expected}`, async () => {
      const body = await check({
        graph_type: 'Single Line',
        granularity: 'Auto',
        start,
        end,
        IANA_time_zone: 'UTC',
      });
      expect(body.metadata.granularity).toBe(expected);
    });
  }
});

describe('DST days, every granularity that meets them', () => {
  const cases: Array<[string, string, string]> = [
    ['America/Los_Angeles', '2024-03-09T00:00:00-08:00', '2024-03-12T00:00:00-07:00'],
    ['America/Los_Angeles', '2024-11-02T00:00:00-07:00', '2024-11-05T00:00:00-08:00'],
    ['Europe/London', '2024-03-30T00:00:00Z', '2024-04-01T12:00:00+01:00'],
    ['Europe/London', '2024-10-26T00:00:00+01:00', '2024-10-28T12:00:00Z'],
  ];
  for (const [zone, start, end] of cases) {
    for (const granularity of ['Hour', 'Day', 'Week', 'Month']) {
      test(`${zone} ${start} ${granularity}`, async () => {
        await check({ graph_type: 'Single Line', granularity, start, end, IANA_time_zone: zone });
      });
    }
    test(`${zone} ${start} Minute around the change`, async () => {
      await check({
        graph_type: 'Single Line',
        granularity: 'Minute',
        start,
        end: new Date(Date.parse(start) + 36 * 3600 * 1000).toISOString(),
        IANA_time_zone: zone,
        customizations: { hideMissing: true },
      });
    });
  }
});

describe('filters', () => {
  const conditions: unknown[][] = [
    ['event', '=', 'purchase'],
    ['price', '=', '29'],
    ['price', '=', 12.5],
    ['code', '=', '2'],
    ['code', '=', 2],
    ['active', '=', true],
    ['active', '=', 'false'],
    ['tags', '=', '["beta"]'],
    ['event', '≠', 'page_view'],
    ['price', '!=', 29],
    ['missing_field', '≠', 'x'],
    ['missing_field', '=', 'x'],
    ['note', 'includes', 'ello'],
    ['note', 'includes', '"hi"'],
    ['tags', 'includes', 'vip'],
    ['tags', 'includes', 7],
    ['tags', 'includes', 'vi'],
    ['code', 'includes', '1'],
    ['note', 'excludes', 'ello'],
    ['tags', 'excludes', 'beta'],
    ['price', '>', 20],
    ['price', '<', '20'],
    ['code', '>', 1.5],
    ['code', '<', 'abc'],
    ['device.os', '=', 'ios'],
    ['device.version', '>', 14.5],
    ['device.version', '=', '15'],
    ['device.version', 'includes', '.'],
    ['device', '=', 'ios'],
  ];
  for (const condition of conditions) {
    test(`flat ${JSON.stringify(condition)}`, async () => {
      await check({ graph_type: 'Single Value', start: 0, end: 'now', filters: [condition] });
      await check({
        graph_type: 'Table',
        split: 'event',
        start: 0,
        end: 'now',
        filters: [condition],
      });
    });
  }
  test('flat list is AND', async () => {
    const body = await check({
      graph_type: 'Single Value',
      start: 0,
      end: 'now',
      filters: [
        ['event', '=', 'purchase'],
        ['tenant', '=', 'acme'],
        ['price', '>', 10],
      ],
    });
    expect(body.result[0].Count).toBeGreaterThan(0);
  });
  test('groups are OR of ANDs', async () => {
    const body = await check({
      graph_type: 'Single Value',
      start: 0,
      end: 'now',
      filters: [
        [
          ['event', '=', 'purchase'],
          ['tenant', '=', 'acme'],
        ],
        [
          ['event', '=', 'signup'],
          ['plan', '≠', 'free'],
        ],
      ],
    });
    expect(body.result[0].Count).toBeGreaterThan(0);
  });
  test('a filter on every graph type', async () => {
    const filters = [
      ['tenant', '=', 'globex'],
      ['plan', 'excludes', 'te'],
    ];
    for (const graph_type of [
      'Single Line',
      'Cumulative Line',
      'Multi Line',
      'Table',
      'Bar Chart',
      'Pie Chart',
      'Single Value',
    ]) {
      await check({
        graph_type,
        split: 'country',
        start: '40 days ago',
        end: 'now',
        filters,
        aggregation: 'Avg',
        metric: 'price',
      });
    }
  });
});

describe('compare, ratio, hideMissing, caps', () => {
  for (const compare of ['1 week ago', '1 month ago', '7 days', '2 hours ago', '1 year ago']) {
    test(`compare ${compare} on lines and Single Value`, async () => {
      for (const graph_type of [
        'Single Line',
        'Cumulative Line',
        'Multi Line',
        'Ratio Line',
        'Single Value',
      ]) {
        const body = await check({
          graph_type,
          split: 'plan',
          compare,
          start: '14 days ago',
          end: 'now',
          granularity: 'Day',
          IANA_time_zone: 'Europe/London',
          numerator_filters: [['event', '=', 'signup']],
          denominator_filters: [['event', '=', 'page_view']],
        });
        expect(body.compare_result).toBeDefined();
      }
    });
  }
  test('Compare Line compares two populations', async () => {
    const body = await check({
      graph_type: 'Compare Line',
      aggregation: 'Sum',
      metric: 'price',
      compare_filters: [['tenant', '=', 'acme']],
      filters: [['event', '=', 'purchase']],
      start: '30 days ago',
      end: 'now',
      granularity: 'Day',
    });
    expect(body.metadata.compare_combined).toBeLessThan(body.metadata.combined);
  });
  test('Ratio Line is null where the denominator is 0', async () => {
    const body = await check({
      graph_type: 'Ratio Line',
      numerator_filters: [['event', '=', 'purchase']],
      denominator_filters: [['event', '=', 'signup']],
      start: '10 days ago',
      end: 'now',
      granularity: 'Hour',
    });
    expect(body.result.some((row: { Ratio: number | null }) => row.Ratio === null)).toBe(true);
    expect(body.result.some((row: { Ratio: number | null }) => typeof row.Ratio === 'number')).toBe(
      true,
    );
  });
  test('Ratio Line with Avg', async () => {
    await check({
      graph_type: 'Ratio Line',
      aggregation: 'Avg',
      metric: 'price',
      numerator_filters: [['tenant', '=', 'acme']],
      denominator_filters: [['tenant', '=', 'globex']],
      start: '60 days ago',
      end: 'now',
      granularity: 'Week',
    });
  });
  for (const graph_type of [
    'Single Line',
    'Multi Line',
    'Cumulative Line',
    'Ratio Line',
    'Compare Line',
  ]) {
    test(`hideMissing on ${graph_type}`, async () => {
      const body = await check({
        graph_type,
        split: 'plan',
        start: '90 days ago',
        end: '3 days ago',
        granularity: 'Day',
        customizations: { hideMissing: true },
        numerator_filters: [['event', '=', 'signup']],
        denominator_filters: [['event', '=', 'login']],
        compare_filters: [['plan', '=', 'pro']],
      });
      expect(body.result.length).toBeLessThan(87);
      expect(body.result.length).toBeGreaterThan(0);
    });
  }
  test('Multi Line keeps the top 10 of 13 countries, in order', async () => {
    const body = await check({
      graph_type: 'Multi Line',
      split: 'country',
      start: 0,
      end: 'now',
      granularity: 'Month',
    });
    expect(body.metadata.series).toHaveLength(10);
    expect(Object.keys(body.result[0])).toHaveLength(11);
  });
  test('Pie caps at 10, Bar at 50, Table sorts by value', async () => {
    const pie = await check({ graph_type: 'Pie Chart', split: 'country', start: 0, end: 'now' });
    expect(pie.result).toHaveLength(10);
    const bar = await check({ graph_type: 'Bar Chart', split: 'id', start: 0, end: 'now' });
    expect(bar.result).toHaveLength(50);
    const table = await check({
      graph_type: 'Table',
      split: 'id',
      start: 0,
      end: 'now',
      aggregation: 'Sum',
      metric: 'price',
    });
    expect(table.result.length).toBe(events.length);
    expect(table.result[0]['Sum(price)']).toBe(99.95);
  });
  test('Table with percentiles and a numeric split', async () => {
    await check({
      graph_type: 'Table',
      split: 'code',
      aggregation: 'P90',
      metric: 'price',
      start: 0,
      end: 'now',
    });
    await check({
      graph_type: 'Table',
      split: 'device.version',
      aggregation: 'Avg',
      metric: 'code',
      start: 0,
      end: 'now',
    });
    await check({ graph_type: 'Table', split: 'tags', start: 0, end: 'now' });
    await check({ graph_type: 'Table', split: 'active', start: 0, end: 'now' });
  });
});

describe('many split values', () => {
  // 12,000 distinct users: more (user, bucket) groups than the engine ranks itself, so DuckDB
  // ranks them; fewer per day, ranked in JS. Both must agree with the reference.
  const many: FixtureEvent[] = Array.from({ length: 12_000 }, (_, i) => ({
    timestamp: NOW - 1 - (i % 2000) * 600,
    json: { uid: `u${String(i % 11_000).padStart(5, '0')}`, amount: (i * 7) % 100, v: i % 3 },
  })).sort((a, b) => a.timestamp - b.timestamp);

  beforeAll(async () => {
    await ingest(server, many, 'many');
  }, 60_000);

  const checkMany = (body: Record<string, unknown>) => checkIn(many, 'many', body);

  for (const agg of [
    { aggregation: 'Count' },
    { aggregation: 'Sum', metric: 'amount' },
    { aggregation: 'Avg', metric: 'amount' },
    { aggregation: 'P90', metric: 'amount' },
  ]) {
    test(`Multi Line split by user, ${agg.aggregation}, hourly and daily`, async () => {
      const hourly = await checkMany({
        graph_type: 'Multi Line',
        split: 'uid',
        granularity: 'Hour',
        start: '14 days ago',
        end: 'now',
        compare: '1 day ago',
        ...agg,
      });
      expect(hourly.metadata.series).toHaveLength(10);
      await checkMany({
        graph_type: 'Stacked Line',
        split: 'v',
        granularity: 'Day',
        start: '14 days ago',
        end: 'now',
        ...agg,
      });
    });
  }
});

describe('ties across the surrogate range', () => {
  // Four names tied at the top, in UTF-8 byte order 'z' < U+E000 < U+FF21 < U+1F600; JavaScript's
  // `<` puts the emoji second. Hourly over three days the 150 fillers make more (name, hour)
  // cells than the engine ranks itself, so the database ranks them; daily, the engine does.
  const TIED = ['\u{1f600}', '\uff21', 'z', '\ue000'];
  const ties: FixtureEvent[] = [
    ...TIED.flatMap((name) =>
      Array.from({ length: 100 }, (_, i) => ({
        timestamp: NOW - 1 - i * 2000,
        json: { name, amount: 3 },
      })),
    ),
    ...Array.from({ length: 150 * 72 }, (_, i) => ({
      timestamp: NOW - 60 - Math.floor(i / 150) * 3600,
      json: { name: `f${String(i % 150).padStart(3, '0')}`, amount: 1 },
    })),
  ].sort((a, b) => a.timestamp - b.timestamp);

  beforeAll(async () => {
    await ingest(server, ties, 'ties');
  }, 60_000);

  const checkTies = (body: Record<string, unknown>) => checkIn(ties, 'ties', body);

  test('the fixture has more hourly cells than the engine ranks itself', () => {
    const cells = new Set(ties.map((e) => `${e.json.name} ${Math.floor(e.timestamp / 3600)}`));
    expect(cells.size).toBeGreaterThan(MAX_SPLIT_CELLS);
  });

  test('collections are listed in the same order', async () => {
    const one = [{ timestamp: NOW - 10, json: { name: 'x' } }];
    await ingest(server, one, 'ties\u{1f600}');
    await ingest(server, one, 'ties\uff21');
    const answer = await server.post('/api/collections', { api_key: API_KEY });
    const names = answer.body.list
      .map((c: { name: string }) => c.name)
      .filter((name: string) => name.startsWith('ties'));
    expect(names).toEqual(['ties', 'ties\uff21', 'ties\u{1f600}']);
  });

  for (const agg of [{ aggregation: 'Count' }, { aggregation: 'Sum', metric: 'amount' }]) {
    test(`${agg.aggregation}: the same order ranked by the engine and by the database`, async () => {
      const expected = ['z', '\ue000', '\uff21', '\u{1f600}'];
      for (const granularity of ['Hour', 'Day']) {
        const body = await checkTies({
          graph_type: 'Multi Line',
          split: 'name',
          granularity,
          start: '3 days ago',
          end: 'now',
          ...agg,
        });
        expect(body.metadata.series.slice(0, 4), granularity).toEqual(expected);
      }
      const table = await checkTies({
        graph_type: 'Table',
        split: 'name',
        start: '3 days ago',
        end: 'now',
        ...agg,
      });
      expect(table.result.slice(0, 4).map((row: { name: string }) => row.name)).toEqual(expected);
    });
  }
});

describe('empty answers', () => {
  test('a collection with no events answers like an empty one', async () => {
    const body = await check({
      graph_type: 'Single Line',
      collection: 'nothing_here',
      start: '3 days ago',
      end: 'now',
      granularity: 'Day',
    });
    expect(body.result.every((row: { Count: number }) => row.Count === 0)).toBe(true);
    const avg = await check({
      graph_type: 'Single Value',
      collection: 'nothing_here',
      aggregation: 'Avg',
      metric: 'x',
      start: 0,
      end: 'now',
    });
    expect(avg.result).toEqual([{ 'Avg(x)': null }]);
  });
  test('a metric no event has gives 0 sums and null averages', async () => {
    const body = await check({
      graph_type: 'Single Line',
      aggregation: 'Sum',
      metric: 'nope',
      start: '2 days ago',
      end: 'now',
      granularity: 'Day',
    });
    expect(body.metadata.combined).toBe(0);
    await check({
      graph_type: 'Multi Line',
      split: 'nope',
      start: '2 days ago',
      end: 'now',
      granularity: 'Day',
    });
  });
});
