import { type CollectionQuery, queryRequestSchema } from '@analytics-chart/protocol';
import { createClient } from '@clickhouse/client-web';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import {
  sortProjectionPreferred,
  sortProjectionServes,
} from '../../src/drivers/clickhouse/clickhouse-driver.ts';
import { KeyColumns, projectionStep } from '../../src/storage/clickhouse/clickhouse-key-columns.ts';
import { API_KEY, startServer, type TestServer } from '../helpers/engine-server.ts';

/**
 * Key columns on ClickHouse: an engine opening a table filled without it gives the top-level
 * keys columns and materializes them, ingest adds columns for new paths, and an engine that has
 * not read the new columns yet answers the same from the JSON. Expected values are worked by
 * hand from the events below.
 */

const url = inject('clickhouseUrl');
const password = inject('clickhousePassword');
const direct = createClient({ url, password });
const DB = 'keycols_default';
const NOW = 1_700_000_000;

// amount reads: 10, 2.5 (numeric string), none ("x"), 4 → Sum over kind = buy: 10 + 2.5 = 12.5.
const imported = [
  { kind: 'buy', amount: 10 },
  { kind: 'buy', amount: ' 2.5 ' },
  { kind: 'buy', amount: 'x' },
  { kind: 'view', amount: 4 },
];

/** An import: {@link imported} written straight into `database`'s event table. */
async function importRows(database: string): Promise<void> {
  await direct.insert({
    table: `${database}._engine_events`,
    columns: ['collection', 'timestamp', 'seq', 'json'],
    values: imported.map((json, i) => ({
      collection: 'shop',
      timestamp: NOW - 10,
      seq: String(i),
      json: JSON.stringify(json),
    })),
    format: 'JSONEachRow',
  });
}

async function keyColumns(): Promise<string[]> {
  const result = await direct.query({
    query: `SELECT comment FROM system.columns WHERE database = {db:String}
            AND table = '_engine_events' AND name LIKE 's\\\\_%' ORDER BY comment`,
    query_params: { db: DB },
    format: 'JSONEachRow',
  });
  return (await result.json<{ comment: string }>()).map((r) => r.comment);
}

async function noMutationPending(): Promise<boolean> {
  const pending = await direct.query({
    query: `SELECT count() AS n FROM system.mutations WHERE database = {db:String} AND NOT is_done`,
    query_params: { db: DB },
    format: 'JSONEachRow',
  });
  return Number((await pending.json<{ n: string }>())[0]?.n) === 0;
}

/**
 * Waits until `ready` holds and no mutation is pending: an opening engine materializes its new
 * columns and its projection in the background, after it already answers.
 */
async function materialized(ready: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if ((await ready()) && (await noMutationPending())) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect.fail('the opening engine did not materialize its columns');
}

const sumOfBuys = { aggregation: 'Sum', metric: 'amount', filters: [['kind', '=', 'buy']] };

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

describe('key columns on ClickHouse', () => {
  let first: TestServer;
  let second: TestServer;
  const options = { now: () => NOW, clickhouse: { url, password, databasePrefix: 'keycols_' } };

  beforeAll(async () => {
    first = await startServer(options);
    // An import: rows written straight into the event table, which the first engine never saw.
    await importRows(DB);
    second = await startServer(options);
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await direct.close();
  });

  test('an engine opening a filled table gives its top-level keys columns, written into the old part', async () => {
    expect(await keyColumns()).toEqual(['["amount"]', '["kind"]']);
    const writtenColumns = async () => {
      const parts = await direct.query({
        query: `SELECT count() AS n FROM system.parts_columns WHERE database = {db:String}
                AND table = '_engine_events' AND active AND match(column, '^[ns]_')`,
        query_params: { db: DB },
        format: 'JSONEachRow',
      });
      return Number((await parts.json<{ n: string }>())[0]?.n);
    };
    await materialized(async () => (await writtenColumns()) === 4);
    expect(await writtenColumns()).toBe(4);
    expect(await single(second, sumOfBuys)).toBe(12.5);
  });

  test('the engine without the columns answers the same from the JSON', async () => {
    expect(await single(first, sumOfBuys)).toBe(12.5);
  });

  test('ingest adds columns for new paths, nested ones included, and both engines agree', async () => {
    const bulk = await second.post('/api/bulk-log', {
      api_key: API_KEY,
      collection: 'shop',
      timestamp: NOW - 5,
      // "cart.total": the literal key where it holds a value, else cart › total: 7 + 3 + 5 = 15.
      jsons: [
        { cart: { total: 7 } },
        { 'cart.total': null, cart: { total: '3' } },
        { 'cart.total': 5, cart: { total: 100 } },
      ],
    });
    expect(bulk.status).toBe(200);
    expect(await keyColumns()).toEqual([
      '["amount"]',
      '["cart","total"]',
      '["cart.total"]',
      '["kind"]',
    ]);
    const sumOfTotals = { aggregation: 'Sum', metric: 'cart.total' };
    expect(await single(second, sumOfTotals)).toBe(15);
    expect(await single(first, sumOfTotals)).toBe(15);
  });

  test('a sort field gives the event table a projection sorted by it, which its filters read', async () => {
    const third = await startServer({
      ...options,
      clickhouse: { ...options.clickhouse, sortField: 'kind' },
    });
    try {
      await materialized(async () => {
        const found = await direct.query({
          query: `SELECT count() AS n FROM system.projections WHERE database = {db:String}
                  AND table = '_engine_events'`,
          query_params: { db: DB },
          format: 'JSONEachRow',
        });
        return Number((await found.json<{ n: string }>())[0]?.n) > 0;
      });
      const columns = await direct.query({
        query: `SELECT name, comment FROM system.columns WHERE database = {db:String}
                AND table = '_engine_events' AND match(name, '^[ns]_')`,
        query_params: { db: DB },
        format: 'JSONEachRow',
      });
      const named = (path: string[], prefix: string) =>
        rows.find((r) => r.comment === JSON.stringify(path) && r.name.startsWith(prefix))?.name;
      const rows = await columns.json<{ name: string; comment: string }>();
      const kind = named(['kind'], 's_');
      const amount = named(['amount'], 'n_');
      const projections = await direct.query({
        query: `SELECT name, query FROM system.projections WHERE database = {db:String}
                AND table = '_engine_events'`,
        query_params: { db: DB },
        format: 'JSONEachRow',
      });
      const [projection, ...others] = await projections.json<{ name: string; query: string }>();
      expect(others).toEqual([]);
      expect(projection?.query).toMatch(new RegExp(`ORDER BY collection, ${kind}, timestamp$`));
      // The projection is the workspace's: an engine opened without a sort field finds it, and
      // weighs it for the queries that filter on its key.
      const unsorted = new KeyColumns(direct, DB);
      expect(unsorted.sortFields()).toEqual([]);
      await unsorted.open();
      expect(unsorted.sortFields()).toEqual(['kind']);
      const filtered = queryRequestSchema.parse({
        collection: 'shop',
        graph_type: 'Single Value',
        start: '1 day ago',
        end: 'now',
        filters: [['kind', '=', 'buy']],
      }) as CollectionQuery;
      expect(sortProjectionServes(filtered, unsorted.sortFields())).toBe(true);
      // Enough events of another collection that the projection reads fewer granules than
      // the table: one in ten is a 'buy' of amount 2.
      await direct.command({
        query: `INSERT INTO ${DB}._engine_events (collection, timestamp, seq, json)
                SELECT 'many', ${NOW - 20} - number % 50, number,
                  if(number % 10 = 0, '{"kind":"buy","amount":2}', '{"kind":"view","amount":1}')
                FROM numbers(200000)`,
      });
      const sum = `SELECT sumOrNull(${amount}) AS v FROM ${DB}._engine_events
                   WHERE collection = 'many' AND coalesce(${kind} = 'buy', false)`;
      const plan = await direct.query({ query: `EXPLAIN ${sum}`, format: 'TabSeparatedRaw' });
      expect(await plan.text()).toContain(`ReadFromMergeTree (${projection?.name})`);
      const answer = await direct.query({ query: sum, format: 'JSONEachRow' });
      expect(await answer.json()).toEqual([{ v: 40000 }]);
      expect(await single(third, { ...sumOfBuys, collection: 'many' })).toBe(40000);
      expect(await single(third, sumOfBuys)).toBe(12.5);
      expect(await single(third, { aggregation: 'Sum', metric: 'cart.total' })).toBe(15);
    } finally {
      await third.close();
    }
  });
});

describe('replicas opening a filled table at once', () => {
  test('write each new column into the parts once', async () => {
    const options = { now: () => NOW, clickhouse: { url, password, databasePrefix: 'keyrep_' } };
    await (await startServer(options)).close();
    await importRows('keyrep_default');
    const replicas = await Promise.all([1, 2, 3].map(() => startServer(options)));
    try {
      const mutations = async () => {
        const result = await direct.query({
          query: `SELECT command, is_done FROM system.mutations
                  WHERE database = 'keyrep_default' AND position(command, 'MATERIALIZE COLUMN') > 0`,
          format: 'JSONEachRow',
        });
        return result.json<{ command: string; is_done: number }>();
      };
      const locked = async () => {
        const result = await direct.query({
          query: `SELECT count() AS n FROM system.tables
                  WHERE database = 'keyrep_default' AND name = '_engine_rollup_build'`,
          format: 'JSONEachRow',
        });
        return Number((await result.json<{ n: string }>())[0]?.n) > 0;
      };
      // Each replica issues its steps in the background, after it already answers, one replica at
      // a time: settled once every mutation is done, nobody holds the build lock, and the count
      // stayed the same for longer than a waiting replica takes to look at the lock again.
      let last = -1;
      for (let i = 0, stable = 0; i < 600 && stable < 15; i++) {
        const now = await mutations();
        const settled = now.length >= 4 && now.every((m) => Number(m.is_done) === 1);
        stable = settled && now.length === last && !(await locked()) ? stable + 1 : 0;
        last = now.length;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const commands = (await mutations()).map((m) => m.command).sort();
      // `kind` and `amount`, each a number and a string form: four columns, one mutation each.
      expect(commands).toHaveLength(4);
      expect(new Set(commands).size).toBe(4);
    } finally {
      for (const replica of replicas) await replica.close();
    }
  });
});

describe('a workspace whose engines sort by a field from the start', () => {
  const SORTED_DB = 'keysorted_default';
  test("the field's string form is LowCardinality, and its filters and splits answer the same", async () => {
    const server = await startServer({
      now: () => NOW,
      clickhouse: { url, password, databasePrefix: 'keysorted_', sortField: 'kind' },
    });
    try {
      const logged = await server.post('/api/bulk-log', {
        api_key: API_KEY,
        collection: 'shop',
        timestamp: NOW - 10,
        jsons: imported,
      });
      expect(logged.status).toBe(200);
      const types = await direct.query({
        query: `SELECT comment, type FROM system.columns WHERE database = {db:String}
                AND table = '_engine_events' AND name LIKE 's\\_%' ORDER BY comment`,
        query_params: { db: SORTED_DB },
        format: 'JSONEachRow',
      });
      expect(await types.json()).toEqual([
        { comment: '["amount"]', type: 'Nullable(String)' },
        { comment: '["kind"]', type: 'LowCardinality(Nullable(String))' },
      ]);
      expect(await single(server, sumOfBuys)).toBe(12.5);
      const split = await server.post('/api/visualize/data', {
        api_key: API_KEY,
        collection: 'shop',
        graph_type: 'Multi Line',
        split: 'kind',
        granularity: 'Day',
        start: NOW - 100,
        end: NOW + 1,
      });
      expect(split.body.metadata).toMatchObject({ series: ['buy', 'view'], combined: 4 });
    } finally {
      await server.close();
    }
  });
});

describe('which queries weigh the sort projection', () => {
  const query = (extra: Record<string, unknown>) =>
    queryRequestSchema.parse({
      collection: 'c',
      graph_type: 'Single Value',
      start: '1 day ago',
      end: 'now',
      ...extra,
    }) as CollectionQuery;
  test("a filter on the sort field, in any of a query's filters", () => {
    expect(sortProjectionServes(query({ filters: [['kind', '=', 'buy']] }), ['kind'])).toBe(true);
    expect(sortProjectionServes(query({ filters: [['kind', '=', 'b']] }), ['a', 'kind'])).toBe(
      true,
    );
    const compare = query({ graph_type: 'Compare Line', compare_filters: [['kind', '=', 'a']] });
    expect(sortProjectionServes(compare, ['kind'])).toBe(true);
    const ratio = query({
      graph_type: 'Ratio Line',
      numerator_filters: [['x', '=', 1]],
      denominator_filters: [[['y', '=', 1]], [['kind', '!=', 'b']]],
    });
    expect(sortProjectionServes(ratio, ['kind'])).toBe(true);
  });
  test('not without one, nor without a sort field', () => {
    expect(sortProjectionServes(query({}), ['kind'])).toBe(false);
    expect(sortProjectionServes(query({ filters: [['kinds', '=', 'buy']] }), ['kind'])).toBe(false);
    expect(sortProjectionServes(query({ filters: [['kind', '=', 'buy']] }), [])).toBe(false);
  });
  test('read by name, without such a filter, where a metric is aggregated', () => {
    const name = sortProjectionPreferred(query({ aggregation: 'P95', metric: 'price' }), ['kind']);
    expect(name).toMatch(/^p_[0-9a-f]{24}$/);
    expect(sortProjectionPreferred(query({ aggregation: 'Sum', metric: 'p' }), ['kind'])).toBe(
      name,
    );
    expect(sortProjectionPreferred(query({ aggregation: 'Sum', metric: 'p' }), ['kinds'])).not.toBe(
      name,
    );
    expect(sortProjectionPreferred(query({ metric: 'p' }), ['kind'])).toBeUndefined();
    const samples = query({ graph_type: 'Samples', aggregation: 'Sum', metric: 'p' });
    expect(sortProjectionPreferred(samples, ['kind'])).toBeUndefined();
    expect(sortProjectionPreferred(query({ aggregation: 'Avg', metric: 'p' }), [])).toBeUndefined();
  });
});

describe('what an opening engine does to the sort projection', () => {
  const a = `n_${'a'.repeat(24)}`;
  const b = `s_${'b'.repeat(24)}`;
  const holding = `SELECT collection, timestamp, ${a}, ${b} ORDER BY collection, ${b}, timestamp`;
  test.each([
    ['nothing where it holds the columns in every part', holding, 0, false, 'none'],
    ['nothing where a MATERIALIZE under way writes its parts', holding, 3, true, 'none'],
    [
      'materializes it where parts lack it and nothing writes them',
      holding,
      3,
      false,
      'materialize',
    ],
    ['adds it where the table has none', undefined, 0, false, 'add'],
    ['makes it again where it lacks a column', holding.replace(`${a}, `, ''), 0, false, 'rebuild'],
  ] as const)('%s', (_, query, partsWithout, pending, step) => {
    expect(projectionStep({ query, partsWithout, pending }, [a, b])).toBe(step);
  });
});

describe('a table written when the engine kept raw JSON text per path', () => {
  const RAW_DB = 'rawcols_default';
  const rawOptions = { now: () => NOW, clickhouse: { url, password, databasePrefix: 'rawcols_' } };

  test('an engine opening it gives those paths form columns and reads them', async () => {
    const creator = await startServer(rawOptions);
    await creator.close();
    // The earlier storage model's column for a nested path, which the top-level keys miss.
    await direct.command({
      query: `ALTER TABLE ${RAW_DB}._engine_events ADD COLUMN IF NOT EXISTS k_0123456789abcdef01234567
              String DEFAULT JSONExtractRaw(json, 'cart', 'total') COMMENT '["cart","total"]'`,
    });
    await direct.insert({
      table: `${RAW_DB}._engine_events`,
      columns: ['collection', 'timestamp', 'seq', 'json'],
      values: [{ cart: { total: 7 } }, { cart: { total: '3' } }].map((json, i) => ({
        collection: 'shop',
        timestamp: NOW - 10,
        seq: String(i),
        json: JSON.stringify(json),
      })),
      format: 'JSONEachRow',
    });
    const engine = await startServer(rawOptions);
    try {
      const result = await direct.query({
        query: `SELECT comment FROM system.columns WHERE database = {db:String}
                AND table = '_engine_events' AND name LIKE 's\\\\_%' ORDER BY comment`,
        query_params: { db: RAW_DB },
        format: 'JSONEachRow',
      });
      const paths = (await result.json<{ comment: string }>()).map((r) => r.comment);
      // `cart` holds only objects: as ingest does, the opening gives it no columns of its own.
      expect(paths).toEqual(['["cart","total"]']);
      expect(await single(engine, { aggregation: 'Sum', metric: 'cart.total' })).toBe(10);
    } finally {
      await engine.close();
    }
  });
});

describe('a table made before the readable payload columns', () => {
  const OLD_DB = 'oldpayload_default';
  const oldOptions = {
    now: () => NOW,
    clickhouse: { url, password, databasePrefix: 'oldpayload_' },
  };

  test('an engine opening it adds them, and reads integer tokens past 64 bits through them', async () => {
    // The event table as engines made it before, filled by an import.
    await direct.command({ query: `CREATE DATABASE IF NOT EXISTS ${OLD_DB}` });
    await direct.command({
      query: `CREATE TABLE ${OLD_DB}._engine_events (
        collection LowCardinality(String), timestamp Int64, seq Int64, json String CODEC(ZSTD(1))
      ) ENGINE = MergeTree ORDER BY (collection, timestamp)`,
    });
    const big = '184467440737095516160';
    await direct.insert({
      table: `${OLD_DB}._engine_events`,
      columns: ['collection', 'timestamp', 'seq', 'json'],
      values: [`{"v":${big},"w":{"x":2}}`, '{"v":3,"w":{"x":5}}'].map((json, i) => ({
        collection: 'shop',
        timestamp: NOW - 10,
        seq: String(i),
        json,
      })),
      format: 'JSONEachRow',
    });
    const engine = await startServer(oldOptions);
    try {
      const result = await direct.query({
        query: `SELECT name, default_kind FROM system.columns WHERE database = {db:String}
                AND table = '_engine_events' AND name LIKE 'json%' ORDER BY name`,
        query_params: { db: OLD_DB },
        format: 'JSONEachRow',
      });
      expect(await result.json()).toEqual([
        { name: 'json', default_kind: '' },
        { name: 'json_marked', default_kind: 'MATERIALIZED' },
        { name: 'json_readable', default_kind: 'ALIAS' },
      ]);
      // v: the top-level key's columns; w.x: read from the payload, which ClickHouse's JSON
      // reader refuses for the first event as stored.
      expect(await single(engine, { aggregation: 'Sum', metric: 'v' })).toBe(Number(big) + 3);
      expect(await single(engine, { aggregation: 'Sum', metric: 'w.x' })).toBe(7);
    } finally {
      await engine.close();
    }
  });
});
