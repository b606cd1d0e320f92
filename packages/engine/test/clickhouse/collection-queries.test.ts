import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { API_KEY, ingest, startServer, type TestServer } from '../helpers/engine-server.ts';
import { expectClose } from '../helpers/expect-close.ts';
import { fixtureEvents, NOW } from '../helpers/fixture-events.ts';
import { type FixtureEvent, referenceAnswer } from '../helpers/reference.ts';

/**
 * Collection mode on the ClickHouse driver, through @clickhouse/client and ClickHouse's HTTP
 * interface (chdb behind it), checked against the same independent reference as the DuckDB
 * driver on the same events.
 */

let server: TestServer;
const events: FixtureEvent[] = fixtureEvents();

beforeAll(async () => {
  server = await startServer({
    now: () => NOW,
    clickhouse: {
      url: inject('clickhouseUrl'),
      password: inject('clickhousePassword'),
      databasePrefix: 'queries_',
    },
  });
  await ingest(server, events);
}, 120_000);

afterAll(async () => {
  await server?.close();
});

async function check(body: Record<string, unknown>) {
  const request = { api_key: API_KEY, ...body };
  const answer = await server.post('/api/visualize/data', request);
  if (answer.status !== 200)
    expect.fail(`${answer.status}: ${answer.text} for ${JSON.stringify(body)}`);
  expectClose(answer.body, referenceAnswer(events, request, NOW));
  return answer.body;
}

const AGGREGATIONS = [
  { aggregation: 'Count' },
  { aggregation: 'Sum', metric: 'price' },
  { aggregation: 'Avg', metric: 'price' },
  { aggregation: 'Median', metric: 'price' },
  { aggregation: 'P90', metric: 'device.version' },
  { aggregation: 'P99', metric: 'code' },
];

const ZONES = [
  'America/Los_Angeles',
  'Europe/London',
  'UTC',
  'Asia/Kolkata',
  'Australia/Lord_Howe',
];

describe('Single Value on ClickHouse', () => {
  for (const agg of AGGREGATIONS) {
    test(`${agg.aggregation} with compare`, async () => {
      const body = await check({
        graph_type: 'Single Value',
        ...agg,
        start: '30 days ago',
        end: 'now',
        compare: '1 week',
        IANA_time_zone: 'America/Los_Angeles',
      });
      expect(body.compare_result).toHaveLength(1);
    });
  }
});

describe('Single Line on ClickHouse', () => {
  for (const agg of AGGREGATIONS) {
    test(`${agg.aggregation} per Day`, async () => {
      const body = await check({
        graph_type: 'Single Line',
        ...agg,
        granularity: 'Day',
        start: '30 days ago',
        end: 'now',
        IANA_time_zone: 'America/Los_Angeles',
      });
      expect(body.result.length).toBeGreaterThan(25);
    });
  }
  const windows: Record<string, [string, string]> = {
    Minute: ['2 hours ago', 'now'],
    Hour: ['2 days ago', 'now'],
    Day: ['60 days ago', 'now'],
    Week: ['6 months ago', 'now'],
    Month: ['2 years ago', 'now'],
  };
  for (const zone of ZONES) {
    for (const [granularity, [start, end]] of Object.entries(windows)) {
      test(`Count per ${granularity} in ${zone}`, async () => {
        await check({ graph_type: 'Single Line', granularity, start, end, IANA_time_zone: zone });
      });
    }
  }
  for (const [zone, start, end] of [
    ['America/Los_Angeles', '2024-03-09T00:00:00Z', '2024-03-12T00:00:00Z'],
    ['America/Los_Angeles', '2024-11-02T00:00:00Z', '2024-11-05T00:00:00Z'],
    ['Europe/London', '2024-10-26T00:00:00Z', '2024-10-28T00:00:00Z'],
  ] as const) {
    for (const granularity of ['Hour', 'Day']) {
      test(`Count per ${granularity} across the DST change in ${zone} from ${start}`, async () => {
        await check({ graph_type: 'Single Line', granularity, start, end, IANA_time_zone: zone });
      });
    }
  }
  test('Sum per Hour with compare and hidden empty buckets', async () => {
    const body = await check({
      graph_type: 'Single Line',
      aggregation: 'Sum',
      metric: 'price',
      granularity: 'Hour',
      start: '3 days ago',
      end: 'now',
      compare: '1 day',
      customizations: { hideMissing: true },
      IANA_time_zone: 'Asia/Kolkata',
    });
    expect(body.compare_result.length).toBeGreaterThan(0);
  });
});

describe('filters on ClickHouse', () => {
  // The DuckDB driver's filter cases (queries.test.ts): every operator on strings, numbers,
  // numeric strings, booleans, arrays, nested and missing fields.
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
    // Equal as numbers only.
    ['price', '=', '29.00'],
    ['code', '=', ' 2e0 '],
  ];
  for (const condition of conditions) {
    test(`Single Value with ${JSON.stringify(condition)}`, async () => {
      await check({ graph_type: 'Single Value', start: 0, end: 'now', filters: [condition] });
    });
  }
  test('groups are OR of ANDs, on a Single Line with Avg', async () => {
    await check({
      graph_type: 'Single Line',
      aggregation: 'Avg',
      metric: 'price',
      start: '40 days ago',
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
  });
});

describe('Cumulative Line and Compare Line on ClickHouse', () => {
  for (const agg of AGGREGATIONS.slice(0, 3)) {
    test(`Cumulative Line ${agg.aggregation} per Day, empty buckets hidden`, async () => {
      await check({
        graph_type: 'Cumulative Line',
        ...agg,
        granularity: 'Day',
        start: '30 days ago',
        end: 'now',
        customizations: { hideMissing: true },
        filters: [['event', '=', 'purchase']],
        IANA_time_zone: 'America/Los_Angeles',
      });
    });
    test(`Compare Line ${agg.aggregation} per Hour`, async () => {
      await check({
        graph_type: 'Compare Line',
        ...agg,
        granularity: 'Hour',
        start: '2 days ago',
        end: 'now',
        filters: [['event', '≠', 'login']],
        compare_filters: [['tenant', '=', 'acme']],
        IANA_time_zone: 'Europe/London',
      });
    });
  }
});

describe('Ratio Line on ClickHouse', () => {
  for (const agg of AGGREGATIONS) {
    test(`Ratio Line ${agg.aggregation} per Day with compare`, async () => {
      await check({
        graph_type: 'Ratio Line',
        ...agg,
        granularity: 'Day',
        start: '30 days ago',
        end: 'now',
        compare: '1 week',
        numerator_filters: [['tenant', '=', 'acme']],
        denominator_filters: [['tenant', '=', 'globex']],
        IANA_time_zone: 'America/Los_Angeles',
      });
    });
  }
  test('Ratio Line per Hour with hidden empty buckets and a filter on both sides', async () => {
    await check({
      graph_type: 'Ratio Line',
      granularity: 'Hour',
      start: '2 days ago',
      end: 'now',
      filters: [['plan', '≠', 'free']],
      // Rare on both sides, so that many hours hold only other events.
      numerator_filters: [['event', '=', 'purchase']],
      denominator_filters: [['event', '=', 'signup']],
      customizations: { hideMissing: true },
      IANA_time_zone: 'Asia/Kolkata',
    });
  });
});

describe('Multi Line and Stacked Line on ClickHouse', () => {
  for (const graph_type of ['Multi Line', 'Stacked Line']) {
    for (const agg of AGGREGATIONS) {
      test(`${graph_type} ${agg.aggregation} split by country, per Day`, async () => {
        const body = await check({
          graph_type,
          ...agg,
          split: 'country',
          granularity: 'Day',
          start: '30 days ago',
          end: 'now',
          IANA_time_zone: 'America/Los_Angeles',
        });
        expect(body.metadata.series).toHaveLength(10);
      });
    }
  }
  test('Multi Line per Hour split by event, with compare and hidden empty buckets', async () => {
    await check({
      graph_type: 'Multi Line',
      split: 'event',
      granularity: 'Hour',
      start: '3 days ago',
      end: 'now',
      compare: '2 days',
      customizations: { hideMissing: true },
      filters: [['tenant', '=', 'acme']],
      IANA_time_zone: 'Europe/London',
    });
  });
  test('Stacked Line split by an array field in a half-hour zone', async () => {
    await check({
      graph_type: 'Stacked Line',
      split: 'tags',
      aggregation: 'Sum',
      metric: 'price',
      granularity: 'Week',
      start: '6 months ago',
      end: 'now',
      IANA_time_zone: 'Asia/Kolkata',
    });
  });
});

describe('Table, Bar Chart and Pie Chart on ClickHouse', () => {
  for (const graph_type of ['Table', 'Bar Chart', 'Pie Chart']) {
    for (const agg of AGGREGATIONS) {
      for (const split of ['country', 'device.version', 'tags', 'price']) {
        test(`${graph_type} ${agg.aggregation} split by ${split}`, async () => {
          await check({
            graph_type,
            ...agg,
            split,
            start: '90 days ago',
            end: 'now',
            filters: [['event', '≠', 'login']],
          });
        });
      }
    }
  }
});

describe('Samples on ClickHouse', () => {
  test('newest first, 50 at most, the payloads as ingested', async () => {
    const answer = await server.post('/api/visualize/data', {
      api_key: API_KEY,
      graph_type: 'Samples',
      start: '1 day ago',
      end: 'now',
    });
    expect(answer.status).toBe(200);
    // Expected: the fixture in time order (ingest order within a second), newest first, and the
    // page ends on a whole second.
    const inWindow = events
      .map((e, i) => ({ ...e, i }))
      .filter((e) => e.timestamp > NOW - 86_400 && e.timestamp < NOW)
      .sort((a, b) => b.timestamp - a.timestamp || b.i - a.i);
    let expected = inWindow.slice(0, 50);
    if (inWindow[50] && inWindow[50].timestamp === inWindow[49]?.timestamp) {
      expected = expected.filter((e) => e.timestamp !== inWindow[49]?.timestamp);
    }
    expect(answer.body.result).toEqual(
      expected.map(({ timestamp, json }) => ({ timestamp, json })),
    );
  });
});

describe('what the ClickHouse driver does not answer yet', () => {
  for (const body of [{ graph_type: 'Cumulative Line', aggregation: 'P95', metric: 'price' }]) {
    test(`${JSON.stringify(body)} is a 501 with a sentence, not a wrong answer`, async () => {
      const answer = await server.post('/api/visualize/data', {
        api_key: API_KEY,
        start: '7 days ago',
        end: 'now',
        ...body,
      });
      expect(answer.status).toBe(501);
      expect(answer.body).toEqual({
        error: expect.stringMatching(/^collection mode on ClickHouse does not answer /),
      });
    });
  }
});
