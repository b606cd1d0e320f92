import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@clickhouse/client-web';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { API_KEY, ingest, startServer, type TestServer } from '../helpers/engine-server.ts';
import { expectClose } from '../helpers/expect-close.ts';
import { fixtureEvents, NOW } from '../helpers/fixture-events.ts';
import { referenceAnswer } from '../helpers/reference.ts';

/**
 * `analytics-engine export --to-clickhouse`, run as users run it: a DuckDB workspace's
 * collections moved into ClickHouse answer the reference queries exactly as before, Samples in
 * the same order, and an export run twice writes nothing twice.
 */

const BIN = join(import.meta.dirname, '../../bin/analytics-engine.mjs');
const url = inject('clickhouseUrl');
const password = inject('clickhousePassword');
// The CLI's database prefix is `analytics_`: a workspace name of its own keeps it apart.
const WORKSPACE = 'migrated';
/** The same events, exported with `--clickhouse-key-columns TYPED_KEYS` and a sort field. */
const TYPED_WORKSPACE = 'migratedtyped';
const TYPED_KEYS = ['country', 'price'];
/** The key the typed workspace's sort projection is ordered by (one of {@link TYPED_KEYS}). */
const SORT_FIELD = 'country';
const TYPED_KEY = 'export-typed-key-0123';
const events = fixtureEvents();
const SIGNUPS = Array.from({ length: 70 }, (_, i) => ({
  timestamp: NOW - 3600,
  json: { n: i, plan: i % 3 ? 'free' : 'pro' },
}));
let dir: string;

const QUERIES: Record<string, unknown>[] = [
  { graph_type: 'Single Value', aggregation: 'P90', metric: 'price', compare: '1 week' },
  {
    graph_type: 'Single Line',
    granularity: 'Hour',
    start: '3 days ago',
    IANA_time_zone: 'Australia/Lord_Howe',
  },
  { graph_type: 'Multi Line', split: 'country', aggregation: 'Sum', metric: 'price' },
  { graph_type: 'Cumulative Line', aggregation: 'Avg', metric: 'price', granularity: 'Day' },
  { graph_type: 'Table', split: 'device.version', aggregation: 'P50', metric: 'price' },
  { graph_type: 'Bar Chart', split: 'tags', filters: [['country', '≠', 'US']] },
  { graph_type: 'Samples', start: '2 days ago' },
];

function withDefaults(q: Record<string, unknown>) {
  return { api_key: API_KEY, start: '30 days ago', end: 'now', IANA_time_zone: 'UTC', ...q };
}

function exportCli(
  workspace = WORKSPACE,
  more: string[] = [],
): { status: number | null; stdout: string; stderr: string } {
  const env: Record<string, string | undefined> = {
    ...process.env,
    CLICKHOUSE_USER: 'default',
    CLICKHOUSE_PASSWORD: password,
  };
  delete env.INIT_CWD;
  const run = spawnSync(
    process.execPath,
    [BIN, 'export', '--data', dir, '--workspace', workspace, '--to-clickhouse', url, ...more],
    { env, encoding: 'utf8' },
  );
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

let before: unknown[];
let samplesBefore: unknown;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'engine-export-'));
  const duck = await startServer({
    dataDir: dir,
    workspaces: { [WORKSPACE]: API_KEY, [TYPED_WORKSPACE]: TYPED_KEY },
    now: () => NOW,
  });
  try {
    await ingest(duck, events);
    await ingest(duck, events, 'all_events', TYPED_KEY);
    await ingest(duck, SIGNUPS, 'signups');
    before = [];
    for (const q of QUERIES) {
      const answer = await duck.post('/api/visualize/data', withDefaults(q));
      expect(answer.status, answer.text).toBe(200);
      before.push(answer.body);
    }
    samplesBefore = (
      await duck.post('/api/visualize/data', {
        ...withDefaults({ graph_type: 'Samples', order: 'Ascending' }),
        collection: 'signups',
      })
    ).body;
  } finally {
    await duck.close();
  }
}, 120_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('export --to-clickhouse', () => {
  let ch: TestServer;
  afterAll(() => ch?.close());

  test('moves every collection; the reference queries answer as on DuckDB', async () => {
    const run = exportCli();
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`all_events: ${events.length} events`);
    expect(run.stdout).toContain(`signups: ${SIGNUPS.length} events`);
    expect(run.stdout).not.toContain(password);
    // The typed keys have form columns before any engine opens the workspace, a nested one too
    // (an opening engine adds top-level keys only).
    const direct = createClient({ url, password });
    try {
      const result = await direct.query({
        query: `SELECT comment FROM system.columns WHERE database = {db:String}
                AND table = '_engine_events' AND name LIKE 's\\_%'`,
        query_params: { db: `analytics_${WORKSPACE}` },
        format: 'JSONEachRow',
      });
      const paths = (await result.json<{ comment: string }>()).map((r) => r.comment);
      expect(paths).toEqual(expect.arrayContaining(['["price"]', '["device","version"]']));
    } finally {
      await direct.close();
    }
    ch = await startServer({
      workspaces: { [WORKSPACE]: API_KEY },
      now: () => NOW,
      clickhouse: { url, password, databasePrefix: 'analytics_' },
    });
    for (const [i, q] of QUERIES.entries()) {
      const request = withDefaults(q);
      const answer = await ch.post('/api/visualize/data', request);
      expect(answer.status, answer.text).toBe(200);
      if (q.graph_type === 'Samples') {
        expect(answer.body).toEqual(before[i]);
        continue;
      }
      // Percentiles may differ in the last bit between the two engines' arithmetic.
      expectClose(answer.body, before[i]);
      expectClose(answer.body, referenceAnswer(events, request, NOW));
    }
    const samples = await ch.post('/api/visualize/data', {
      ...withDefaults({ graph_type: 'Samples', order: 'Ascending' }),
      collection: 'signups',
    });
    // 70 events in one second: one page, in ingest order, as DuckDB answered.
    expect(samples.body).toEqual(samplesBefore);
    expect(samples.body.result.map((r: { json: { n: number } }) => r.json.n)).toEqual(
      SIGNUPS.map((e) => e.json.n),
    );
    expect((await ch.post('/api/collections', { api_key: API_KEY })).body).toEqual({
      list: [{ name: 'all_events' }, { name: 'signups' }],
    });
  });

  test('with --clickhouse-key-columns, only those keys get columns; with --clickhouse-sort-field, every part is written with the sort projection; the queries answer the same', async () => {
    const run = exportCli(TYPED_WORKSPACE, [
      '--clickhouse-key-columns',
      TYPED_KEYS.join(','),
      '--clickhouse-sort-field',
      SORT_FIELD,
    ]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const direct = createClient({ url, password });
    const rows = async <T>(query: string) => {
      const result = await direct.query({
        query,
        query_params: { db: `analytics_${TYPED_WORKSPACE}` },
        format: 'JSONEachRow',
      });
      return result.json<T>();
    };
    try {
      const columns = await rows<{ comment: string }>(
        `SELECT comment FROM system.columns WHERE database = {db:String}
         AND table = '_engine_events' AND name LIKE 's\\_%' ORDER BY comment`,
      );
      expect(columns.map((r) => r.comment)).toEqual(
        TYPED_KEYS.map((key) => JSON.stringify([key])).sort(),
      );
      // One projection, holding every form column, in every part, and no part rewritten by a
      // mutation (its name would end in the mutation's version): the inserts wrote it.
      const projections = await rows<{ name: string; query: string }>(
        `SELECT name, query FROM system.projections WHERE database = {db:String} AND table = '_engine_events'`,
      );
      expect(projections).toHaveLength(1);
      const [projection] = projections as [{ name: string; query: string }];
      const forms = await rows<{ name: string }>(
        `SELECT name FROM system.columns WHERE database = {db:String} AND table = '_engine_events'
         AND match(name, '^[ns]_[0-9a-f]{24}$')`,
      );
      expect(forms).toHaveLength(TYPED_KEYS.length * 2);
      for (const { name } of forms) expect(projection.query).toContain(name);
      const parts = await rows<{ name: string; projections: string[] }>(
        `SELECT name, projections FROM system.parts
         WHERE database = {db:String} AND table = '_engine_events' AND active`,
      );
      expect(parts.length).toBeGreaterThan(0);
      for (const part of parts) {
        expect(part.projections).toEqual([projection.name]);
        expect(part.name).toMatch(/^[^_]+_\d+_\d+_\d+$/);
      }
    } finally {
      await direct.close();
    }
    const typed = await startServer({
      workspaces: { [TYPED_WORKSPACE]: TYPED_KEY },
      now: () => NOW,
      clickhouse: {
        url,
        password,
        databasePrefix: 'analytics_',
        keyColumns: TYPED_KEYS,
        sortField: SORT_FIELD,
      },
    });
    try {
      for (const [i, q] of QUERIES.entries()) {
        const answer = await typed.post('/api/visualize/data', {
          ...withDefaults(q),
          api_key: TYPED_KEY,
        });
        expect(answer.status, answer.text).toBe(200);
        if (q.graph_type === 'Samples') expect(answer.body).toEqual(before[i]);
        else expectClose(answer.body, before[i]);
      }
    } finally {
      await typed.close();
    }
  });

  test('run again, writes nothing twice', async () => {
    // The export takes seconds: a fresh engine rather than a keep-alive socket its server closed.
    await ch.close();
    expect(exportCli().status).toBe(0);
    ch = await startServer({
      workspaces: { [WORKSPACE]: API_KEY },
      now: () => NOW,
      clickhouse: { url, password, databasePrefix: 'analytics_' },
    });
    const count = await ch.post('/api/visualize/data', {
      ...withDefaults({ graph_type: 'Single Value' }),
      collection: 'signups',
    });
    expect(count.body.result).toEqual([{ Count: SIGNUPS.length }]);
  });

  test('refuses credentials in the URL, without echoing them', () => {
    const run = spawnSync(
      process.execPath,
      [BIN, 'export', '--data', dir, '--to-clickhouse', 'http://u:hunter2@127.0.0.1:1'],
      { encoding: 'utf8' },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/CLICKHOUSE_USER and CLICKHOUSE_PASSWORD, not in the URL/);
    expect(run.stderr).not.toContain('hunter2');
  });
});
