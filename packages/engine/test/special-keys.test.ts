import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ON_CLICKHOUSE } from './helpers/driver.ts';
import { API_KEY, ingest, startServer, type TestServer } from './helpers/engine-server.ts';

/**
 * Values that become object keys in an answer (split values, SQL column names, struct fields and
 * map keys) whatever they spell: `__proto__` and `constructor` are ordinary keys in JSON, and
 * must come back as such. Counts are worked out by hand from the four events below.
 */

let server: TestServer;
const NOW = 1_700_100_000;
const HOUR = 3600;
// One hour bucket (UTC) holds all four events: __proto__ twice, constructor once, timestamp once.
const EVENTS = [
  { timestamp: NOW - 100, json: { event: '__proto__' } },
  { timestamp: NOW - 90, json: { event: '__proto__' } },
  { timestamp: NOW - 80, json: { event: 'constructor' } },
  { timestamp: NOW - 70, json: { event: 'timestamp' } },
];
const BUCKET = Math.floor((NOW - 100) / HOUR) * HOUR;

beforeAll(async () => {
  // Every body here is small enough to be parsed inline: the engine (and each restart) starts no body workers.
  server = await startServer({ now: () => NOW, bodyWorkers: 0 });
  await ingest(server, EVENTS, 'keys');
});
afterAll(async () => {
  await server?.close();
});

async function ask(body: Record<string, unknown>) {
  const answer = await server.post('/api/visualize/data', { api_key: API_KEY, ...body });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as { result: Record<string, unknown>[]; metadata: Record<string, unknown> };
}

const own = (row: Record<string, unknown> | undefined, key: string) =>
  row !== undefined && Object.hasOwn(row, key) ? row[key] : 'missing';

describe('keys that are also JavaScript names', () => {
  test.each(['Multi Line', 'Stacked Line'])(
    '%s: a series named __proto__ is a row key',
    async (graph) => {
      const envelope = await ask({
        collection: 'keys',
        graph_type: graph,
        split: 'event',
        start: BUCKET - 1,
        end: BUCKET + HOUR,
        granularity: 'Hour',
        IANA_time_zone: 'UTC',
      });
      expect(envelope.metadata.series).toEqual(['__proto__', 'constructor', 'timestamp']);
      expect(envelope.result).toHaveLength(1);
      const [row] = envelope.result;
      expect(own(row, '__proto__')).toBe(2);
      expect(own(row, 'constructor')).toBe(1);
      // The row's label keeps its key: a series named `timestamp` cannot share it.
      expect(own(row, 'timestamp')).toBe(
        `${new Date(BUCKET * 1000).toISOString().slice(0, 13).replace('T', ' ')}:00`,
      );
      expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    },
  );

  test('Table: the split value __proto__ is a row like any other', async () => {
    const envelope = await ask({
      collection: 'keys',
      graph_type: 'Table',
      split: 'event',
      start: BUCKET - 1,
      end: 'now',
    });
    expect(envelope.result).toEqual([
      { event: '__proto__', Count: 2 },
      { event: 'constructor', Count: 1 },
      { event: 'timestamp', Count: 1 },
    ]);
  });

  // A struct field named __proto__ is lost inside @duckdb/node-api itself (its struct values are
  // built by assignment), before the engine sees the value.
  test('SQL mode: a column and a map key named __proto__', async () => {
    const envelope = await ask({
      // A map literal in each driver's own dialect.
      sql_query: ON_CLICKHOUSE
        ? `SELECT 1 AS "__proto__", map('__proto__', 4, 'b', 3) AS m`
        : `SELECT 1 AS "__proto__", MAP {'__proto__': 4, 'b': 3} AS m`,
      graph_type: 'Table',
    });
    expect(envelope.result).toHaveLength(1);
    const [row] = envelope.result;
    expect(own(row, '__proto__')).toBe(1);
    expect(own(row?.m as Record<string, unknown>, '__proto__')).toBe(4);
    expect(own(row?.m as Record<string, unknown>, 'b')).toBe(3);
    expect(JSON.parse(JSON.stringify(row))).toEqual(
      JSON.parse('{"__proto__":1,"m":{"__proto__":4,"b":3}}'),
    );
  });
});
