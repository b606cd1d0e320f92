import { createClient } from '@clickhouse/client-web';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { workspaceSchema } from '../../src/storage/clickhouse/clickhouse-schema.ts';
import { API_KEY, startServer, type TestServer } from '../helpers/engine-server.ts';

/**
 * Key columns are never a condition of a write: where ClickHouse refuses the ALTER that adds
 * them, here because the table's metadata would pass `max_query_size` (as a shared event table
 * whose DEFAULTs spelled out the payload rewrite once did), `/api/bulk-log` still answers 200,
 * the paths are read from the JSON with the same answers, and the refusal is logged once, as a
 * sentence without SQL. The table is brought near the limit by a column with a long COMMENT.
 * Expected values are worked by hand from the events below.
 */

const url = inject('clickhouseUrl');
const password = inject('clickhousePassword');
const direct = createClient({ url, password });
afterAll(() => direct.close());
const NOW = 1_700_000_000;

/** ClickHouse's default `max_query_size`, which also caps a table's metadata. */
const LIMIT = 262_144;
/** What a table's metadata file holds beyond `system.tables.create_table_query` (measured). */
const METADATA_EXTRA = 100;

const BIG = '123456789012345678901234';
const NEGATIVE = '-98765432109876543210';
// Payload text: the two integer tokens are past 64 bits, which ClickHouse's JSON reader refuses.
const EVENTS = [
  `{"kind":"buy","amount":10,"big":${BIG},"cart":{"total":7}}`,
  `{"kind":"buy","amount":" 2.5 ","big":${NEGATIVE},"cart":{"total":"3"}}`,
  `{"kind":"view","amount":4,"big":1,"cart":{"total":100}}`,
];

async function createTableQueryLength(db: string): Promise<number> {
  const result = await direct.query({
    query: `SELECT length(create_table_query) AS n FROM system.tables
            WHERE database = {db:String} AND name = '_engine_events'`,
    query_params: { db },
    format: 'JSONEachRow',
  });
  return Number((await result.json<{ n: string }>())[0]?.n);
}

/** Adds a column whose COMMENT leaves about `room` bytes of metadata under {@link LIMIT}. */
async function fillMetadata(db: string, room: number): Promise<void> {
  const declaration = 40;
  const comment = LIMIT - METADATA_EXTRA - room - (await createTableQueryLength(db)) - declaration;
  await direct.command({
    query: `ALTER TABLE ${db}._engine_events ADD COLUMN pad String DEFAULT '' COMMENT '${'x'.repeat(comment)}'`,
  });
  const left = LIMIT - METADATA_EXTRA - (await createTableQueryLength(db));
  expect(Math.abs(left - room)).toBeLessThan(100);
}

async function columnsOf(db: string): Promise<string[]> {
  const result = await direct.query({
    query: `SELECT name FROM system.columns WHERE database = {db:String}
            AND table = '_engine_events' ORDER BY name`,
    query_params: { db },
    format: 'JSONEachRow',
  });
  return (await result.json<{ name: string }>()).map((r) => r.name);
}

async function single(server: TestServer, body: Record<string, unknown>): Promise<unknown> {
  const answer = await server.post('/api/visualize/data', {
    api_key: API_KEY,
    collection: 'shop',
    graph_type: 'Single Value',
    start: NOW - 100,
    end: NOW + 1,
    ...body,
  });
  if (answer.status !== 200) expect.fail(`${answer.status}: ${answer.text}`);
  return Object.values(answer.body.result[0])[0];
}

/** Writes the events, twice, and checks every answer and what was logged. */
async function writesAndAnswers(server: TestServer, logged: string[]): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const bulk = await server.post('/api/bulk-log', {
      api_key: API_KEY,
      collection: 'shop',
      timestamp: NOW - 5,
      jsons: EVENTS,
    });
    expect(bulk.status).toBe(200);
  }
  // Each refusal is told once: the second request does not ask for its paths' columns again.
  const refusals = logged.filter((line) => line.includes('key path'));
  expect(refusals).toHaveLength(1);
  expect(refusals[0]).toMatch(
    /^could not add the columns of \d+ key path\(s\) to refused\w*_default's event table: ClickHouse error 229 \(QUERY_IS_TOO_LARGE\); those paths are read from the JSON payload$/,
  );
  for (const line of logged)
    expect(line).not.toMatch(/SELECT|ALTER|DEFAULT|JSON\w+\(|_engine_events/);

  const buys = [['kind', '=', 'buy']];
  // Each event twice: amount 10 + 2.5 (a numeric string) per request.
  expect(await single(server, { aggregation: 'Sum', metric: 'amount', filters: buys })).toBe(25);
  expect(await single(server, { aggregation: 'Sum', metric: 'cart.total' })).toBe(220);
  // Doubles added in any order: within a few units in the last place of the sum.
  const sum = Number(await single(server, { aggregation: 'Sum', metric: 'big', filters: buys }));
  const expected = 2 * Number(BIG) + 2 * Number(NEGATIVE);
  expect(Math.abs(sum - expected)).toBeLessThan(expected * 1e-15);
  expect(await single(server, { aggregation: 'Count', filters: [['big', '>', 1e20]] })).toBe(2);
  expect(await single(server, { aggregation: 'Count', filters: [['big', '=', BIG]] })).toBe(2);
}

describe('a refused ALTER leaves the paths read from the JSON', () => {
  test('on a table with the readable payload columns: 200, the same answers, one sentence', async () => {
    const db = 'refused_default';
    for (const statement of workspaceSchema(db)) await direct.command({ query: statement });
    // Room for less than one path's two columns.
    await fillMetadata(db, 1_000);
    const logged: string[] = [];
    const server = await startServer({
      now: () => NOW,
      clickhouse: { url, password, databasePrefix: 'refused_' },
      logError: (message) => logged.push(message),
    });
    try {
      await writesAndAnswers(server, logged);
      expect(await columnsOf(db)).toEqual([
        '_inserted',
        'collection',
        'json',
        'json_marked',
        'json_readable',
        'pad',
        'seq',
        'timestamp',
      ]);
    } finally {
      await server.close();
    }
  });

  test('on a table made before them, which cannot take them either: read through the rewrite in the query', async () => {
    const db = 'refusedold_default';
    // The event table as engines made it before the readable payload's columns.
    await direct.command({ query: `CREATE DATABASE IF NOT EXISTS ${db}` });
    await direct.command({
      query: `CREATE TABLE ${db}._engine_events (
        collection LowCardinality(String), timestamp Int64, seq Int64, json String CODEC(ZSTD(1))
      ) ENGINE = MergeTree ORDER BY (collection, timestamp)
      SETTINGS non_replicated_deduplication_window = 10000`,
    });
    await fillMetadata(db, 200);
    const logged: string[] = [];
    const server = await startServer({
      now: () => NOW,
      clickhouse: { url, password, databasePrefix: 'refusedold_' },
      logError: (message) => logged.push(message),
    });
    try {
      expect(logged).toEqual([
        "could not add the readable payload's columns to refusedold_default's event table: ClickHouse error 229 (QUERY_IS_TOO_LARGE); queries read the payload through the rewrite written out in them",
      ]);
      await writesAndAnswers(server, logged);
      expect(await columnsOf(db)).toEqual(['collection', 'json', 'pad', 'seq', 'timestamp']);
    } finally {
      await server.close();
    }
  });
});
