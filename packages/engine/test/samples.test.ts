import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { API_KEY, ingest, startServer, type TestServer } from './helpers/engine-server.ts';

/**
 * Samples: order, the 50-row limit, filters, ingest order within a second, and paging by moving
 * `start` (or `end`) that never loses an event, even when many share a second.
 */

let server: TestServer;
const NOW = 1_700_100_000;
// 40 lone seconds, then a burst of 70 events in one second, then 45 more (3 per second).
const TIMES: number[] = [
  ...Array.from({ length: 40 }, (_, i) => 1_700_000_000 + i * 10),
  ...Array.from({ length: 70 }, () => 1_700_000_500),
  ...Array.from({ length: 45 }, (_, i) => 1_700_000_600 + Math.floor(i / 3)),
];
const EVENTS = TIMES.map((timestamp, id) => ({ timestamp, json: { id, odd: id % 2 === 1 } }));

beforeAll(async () => {
  // Every body here is small enough to be parsed inline: the engine (and each restart) starts no body workers.
  server = await startServer({ now: () => NOW, bodyWorkers: 0 });
  await ingest(server, EVENTS, 'pages');
});

afterAll(async () => {
  await server?.close();
});

type Sample = { timestamp: number; json: { id: number } };

async function page(extra: Record<string, unknown>): Promise<Sample[]> {
  const answer = await server.post('/api/visualize/data', {
    api_key: API_KEY,
    collection: 'pages',
    graph_type: 'Samples',
    start: 0,
    end: 'now',
    ...extra,
  });
  expect(answer.status).toBe(200);
  expect(answer.body.metadata).toEqual({});
  return answer.body.result;
}

describe('Samples', () => {
  test('newest first by default, at most 50 rows', async () => {
    const rows = await page({});
    expect(rows).toHaveLength(45);
    expect(rows[0]).toEqual({ timestamp: 1_700_000_614, json: { id: 154, odd: false } });
    // Within a second, the latest ingested comes first; the page ends on a whole second.
    expect(rows.map((r) => r.json.id)).toEqual(Array.from({ length: 45 }, (_, i) => 154 - i));
  });
  test('Ascending gives the oldest first, in ingest order', async () => {
    const rows = await page({ order: 'Ascending' });
    expect(rows.map((r) => r.json.id)).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });
  test('Descending is the exact reverse of Ascending, ties within a second included', async () => {
    for (const window of [{ start: 1_700_000_599 }, { start: 1_700_000_499, end: 1_700_000_501 }]) {
      const ascending = await page({ ...window, order: 'Ascending' });
      const descending = await page({ ...window, order: 'Descending' });
      expect(new Set(ascending.map((r) => r.timestamp)).size).toBeLessThan(ascending.length);
      expect(descending).toEqual([...ascending].reverse());
    }
  });
  test('filters apply', async () => {
    const rows = await page({
      order: 'Ascending',
      filters: [['odd', '=', true]],
      start: 1_700_000_599,
    });
    expect(rows.map((r) => r.json.id)).toEqual([
      111, 113, 115, 117, 119, 121, 123, 125, 127, 129, 131, 133, 135, 137, 139, 141, 143, 145, 147,
      149, 151, 153,
    ]);
  });
  test('more than 50 events in one second come as one page', async () => {
    const rows = await page({ order: 'Ascending', start: 1_700_000_390 });
    expect(rows).toHaveLength(70);
    expect(new Set(rows.map((r) => r.timestamp))).toEqual(new Set([1_700_000_500]));
    expect(rows.map((r) => r.json.id)).toEqual(Array.from({ length: 70 }, (_, i) => 40 + i));
  });
  test('paging Ascending by moving start retrieves every event once, then []', async () => {
    const seen: number[] = [];
    let start = 0;
    for (let calls = 0; calls < 20; calls++) {
      const rows = await page({ order: 'Ascending', start });
      if (rows.length === 0) break;
      expect(rows.length).toBeLessThanOrEqual(70);
      seen.push(...rows.map((r) => r.json.id));
      start = (rows[rows.length - 1] as Sample).timestamp;
    }
    expect(seen).toEqual(EVENTS.map((e) => e.json.id));
    expect(await page({ order: 'Ascending', start })).toEqual([]);
  });
  test('paging Descending by moving end retrieves every event once, then []', async () => {
    const seen: number[] = [];
    let end: number | string = 'now';
    for (let calls = 0; calls < 20; calls++) {
      const rows = await page({ end });
      if (rows.length === 0) break;
      seen.push(...rows.map((r) => r.json.id));
      end = (rows[rows.length - 1] as Sample).timestamp;
    }
    expect(seen).toEqual(EVENTS.map((e) => e.json.id).reverse());
    expect(await page({ end })).toEqual([]);
  });
  test('an empty window and an unknown collection give []', async () => {
    expect(await page({ start: 1_600_000_000, end: 1_600_000_100 })).toEqual([]);
    expect(await page({ collection: 'none' })).toEqual([]);
  });
});
