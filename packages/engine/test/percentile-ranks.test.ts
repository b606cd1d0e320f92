import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { API_KEY, ingest, startServer, type TestServer } from './helpers/engine-server.ts';
import { random } from './helpers/fixture-events.ts';
import { type FixtureEvent, referenceAnswer } from './helpers/reference.ts';

/**
 * Single Value percentiles over every count of values from 1 to {@link MOST}: for each count,
 * h = level·(n − 1) falls on a rank (⌊h⌋ = ⌈h⌉) for some counts and levels and between two ranks
 * for others, which the statements pick apart differently. Values arrive in no order, with
 * repeats, negatives and values without a number among them. Each answer must be
 * the reference's, bit for bit.
 */

const NOW = 1_700_100_000;
const MOST = 24;
const LEVELS = ['P50', 'P75', 'P90', 'P95', 'P99'];

/** Event i holds `rank` i and a value drawn from a seeded generator; every fifth has none. */
function events(): FixtureEvent[] {
  const next = random(7);
  return Array.from({ length: MOST }, (_, i) => {
    const draw = next();
    const v = i % 5 === 4 ? 'none' : Math.round((draw - 0.3) * 2000) / 8;
    return { timestamp: NOW - 1000 + i, json: { rank: i, v: i % 7 === 3 ? 17.5 : v } };
  });
}

const EVENTS = events();
let server: TestServer;

beforeAll(async () => {
  server = await startServer({ now: () => NOW, bodyWorkers: 0 });
  await ingest(server, EVENTS, 'ranks');
});
afterAll(async () => {
  await server?.close();
});

describe('Single Value percentiles', () => {
  test.each(LEVELS)('%s over the first n events, for every n', async (aggregation) => {
    for (let n = 1; n <= MOST; n++) {
      const body = {
        api_key: API_KEY,
        collection: 'ranks',
        graph_type: 'Single Value',
        aggregation,
        metric: 'v',
        filters: [['rank', '<', n]],
        start: NOW - 2000,
        end: NOW,
        IANA_time_zone: 'UTC',
      };
      const answer = await server.post('/api/visualize/data', body);
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body, `${aggregation} of the first ${n}`).toEqual(
        referenceAnswer(EVENTS, body, NOW, 'ranks'),
      );
    }
  });
});
