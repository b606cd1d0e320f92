import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { API_KEY, ingest, startServer, type TestServer } from './helpers/engine-server.ts';

/**
 * Hand-worked DST fixtures: every event below is placed by hand on either side of a change, and
 * the expected buckets are worked out by hand (labels in the zone's wall time).
 */

const at = (iso: string) => Date.parse(iso) / 1000;
const EVENTS: Array<[string, string]> = [
  // Los Angeles, spring forward 2024-03-10 02:00 PST -> 03:00 PDT (10:00Z)
  ['a', '2024-03-10T07:59:59Z'], // Mar 9 23:59:59 PST
  ['b', '2024-03-10T08:00:00Z'], // Mar 10 00:00:00 PST
  ['c', '2024-03-10T09:59:59Z'], // 01:59:59 PST
  ['d', '2024-03-10T10:00:00Z'], // 03:00:00 PDT
  ['e', '2024-03-10T10:30:00Z'], // 03:30 PDT
  ['f', '2024-03-11T06:59:59Z'], // Mar 10 23:59:59 PDT (the day had 23 hours)
  ['g', '2024-03-11T07:00:00Z'], // Mar 11 00:00 PDT
  // Los Angeles, fall back 2024-11-03 02:00 PDT -> 01:00 PST (09:00Z)
  ['h', '2024-11-03T07:00:00Z'], // Nov 3 00:00 PDT
  ['i', '2024-11-03T08:30:00Z'], // 01:30 PDT
  ['j', '2024-11-03T09:30:00Z'], // 01:30 PST (the hour again)
  ['k', '2024-11-03T09:45:00Z'], // 01:45 PST
  ['l', '2024-11-04T07:59:59Z'], // Nov 3 23:59:59 PST (the day had 25 hours)
  ['m', '2024-11-04T08:00:00Z'], // Nov 4 00:00 PST
  // London, spring forward 2024-03-31 01:00 GMT -> 02:00 BST (01:00Z)
  ['n', '2024-03-31T00:30:00Z'], // 00:30 GMT
  ['o', '2024-03-31T01:00:00Z'], // 02:00 BST
  ['p', '2024-03-31T22:59:59Z'], // Mar 31 23:59:59 BST
  ['q', '2024-03-31T23:00:00Z'], // Apr 1 00:00 BST
  // London, fall back 2024-10-27 02:00 BST -> 01:00 GMT (01:00Z)
  ['u', '2024-10-26T23:00:00Z'], // Oct 27 00:00 BST
  ['r', '2024-10-27T00:30:00Z'], // 01:30 BST
  ['s', '2024-10-27T01:30:00Z'], // 01:30 GMT
  ['t', '2024-10-27T23:59:59Z'], // Oct 27 23:59:59 GMT
  // The first hours of 1970: wall-clock times before the epoch in Los Angeles.
  ['v', '1970-01-01T03:00:00Z'], // Dec 31 1969 19:00 PST
  ['w', '1970-01-01T09:00:00Z'], // Jan 1 1970 01:00 PST
];

let server: TestServer;

beforeAll(async () => {
  // Every body here is small enough to be parsed inline: the engine (and each restart) starts no body workers.
  server = await startServer({ now: () => at('2024-12-01T00:00:00Z'), bodyWorkers: 0 });
  const events = EVENTS.map(([id, iso]) => ({ timestamp: at(iso), json: { id } })).sort(
    (x, y) => x.timestamp - y.timestamp,
  );
  await ingest(server, events, 'dst');
});

afterAll(async () => {
  await server?.close();
});

async function counts(zone: string, granularity: string, start: string, end: string) {
  const answer = await server.post('/api/visualize/data', {
    api_key: API_KEY,
    collection: 'dst',
    graph_type: 'Single Line',
    IANA_time_zone: zone,
    granularity,
    start,
    end,
  });
  expect(answer.status).toBe(200);
  return answer.body.result.map((row: { timestamp: string; Count: number }) => [
    row.timestamp,
    row.Count,
  ]);
}

describe('America/Los_Angeles', () => {
  const zone = 'America/Los_Angeles';
  test('spring forward: Mar 10 is one 23-hour day bucket', async () => {
    expect(
      await counts(zone, 'Day', '2024-03-09T00:00:00-08:00', '2024-03-12T00:00:00-07:00'),
    ).toEqual([
      ['2024-03-09', 1],
      ['2024-03-10', 5],
      ['2024-03-11', 1],
    ]);
  });
  test('spring forward: no 02:00 hour', async () => {
    expect(await counts(zone, 'Hour', '2024-03-10T07:00:00Z', '2024-03-10T12:00:00Z')).toEqual([
      ['2024-03-09 23:00', 1],
      ['2024-03-10 00:00', 1],
      ['2024-03-10 01:00', 1],
      ['2024-03-10 03:00', 2],
      ['2024-03-10 04:00', 0],
    ]);
  });
  test('fall back: Nov 3 is one 25-hour day bucket', async () => {
    expect(
      await counts(zone, 'Day', '2024-11-02T12:00:00-07:00', '2024-11-04T12:00:00-08:00'),
    ).toEqual([
      ['2024-11-02', 0],
      ['2024-11-03', 5],
      ['2024-11-04', 1],
    ]);
  });
  test('fall back: the repeated 01:00 hour is two buckets', async () => {
    expect(await counts(zone, 'Hour', '2024-11-03T06:00:00Z', '2024-11-03T11:00:00Z')).toEqual([
      ['2024-11-02 23:00', 0],
      ['2024-11-03 00:00', 1],
      ['2024-11-03 01:00', 1],
      ['2024-11-03 01:00', 2],
      ['2024-11-03 02:00', 0],
    ]);
  });
  test('weeks start on Monday across the change', async () => {
    expect(
      await counts(zone, 'Week', '2024-03-09T00:00:00-08:00', '2024-03-12T00:00:00-07:00'),
    ).toEqual([
      ['2024-03-04', 6],
      ['2024-03-11', 1],
    ]);
  });
});

describe('Europe/London', () => {
  const zone = 'Europe/London';
  test('spring forward: Mar 31 is one 23-hour day bucket', async () => {
    expect(await counts(zone, 'Day', '2024-03-30T12:00:00Z', '2024-04-01T12:00:00+01:00')).toEqual([
      ['2024-03-30', 0],
      ['2024-03-31', 3],
      ['2024-04-01', 1],
    ]);
  });
  test('spring forward: 00:00 then 02:00', async () => {
    expect(await counts(zone, 'Hour', '2024-03-30T23:00:00Z', '2024-03-31T03:00:00Z')).toEqual([
      ['2024-03-30 23:00', 0],
      ['2024-03-31 00:00', 1],
      ['2024-03-31 02:00', 1],
      ['2024-03-31 03:00', 0],
    ]);
  });
  test('fall back: Oct 27 is one 25-hour day; 01:00 twice', async () => {
    expect(await counts(zone, 'Day', '2024-10-26T12:00:00+01:00', '2024-10-28T12:00:00Z')).toEqual([
      ['2024-10-26', 0],
      ['2024-10-27', 4],
      ['2024-10-28', 0],
    ]);
    expect(await counts(zone, 'Hour', '2024-10-26T22:00:00Z', '2024-10-27T03:00:00Z')).toEqual([
      ['2024-10-26 23:00', 0],
      ['2024-10-27 00:00', 1],
      ['2024-10-27 01:00', 1],
      ['2024-10-27 01:00', 1],
      ['2024-10-27 02:00', 0],
    ]);
  });
  test('months follow the wall calendar', async () => {
    expect(
      await counts(zone, 'Month', '2024-03-30T12:00:00Z', '2024-04-01T12:00:00+01:00'),
    ).toEqual([
      ['2024-03', 3],
      ['2024-04', 1],
    ]);
  });
});

test('days before the epoch on the wall clock', async () => {
  const zone = 'America/Los_Angeles';
  expect(await counts(zone, 'Day', '0', '1970-01-03T00:00:00Z')).toEqual([
    ['1969-12-31', 1],
    ['1970-01-01', 1],
    ['1970-01-02', 0],
  ]);
  expect(await counts(zone, 'Week', '0', '1970-01-03T00:00:00Z')).toEqual([['1969-12-29', 2]]);
  expect(await counts(zone, 'Month', '0', '1970-01-03T00:00:00Z')).toEqual([
    ['1969-12', 1],
    ['1970-01', 1],
  ]);
  expect(await counts(zone, 'Hour', '1970-01-01T02:00:00Z', '1970-01-01T04:00:00Z')).toEqual([
    ['1969-12-31 18:00', 0],
    ['1969-12-31 19:00', 1],
  ]);
});

test('the same instants in UTC fall on other days', async () => {
  expect(await counts('UTC', 'Day', '2024-03-09T00:00:00Z', '2024-03-12T00:00:00Z')).toEqual([
    ['2024-03-09', 0],
    ['2024-03-10', 5],
    ['2024-03-11', 2],
  ]);
});
