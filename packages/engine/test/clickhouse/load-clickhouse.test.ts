import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@clickhouse/client-web';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { parseChunk } from '../../src/ingest/ndjson-chunk.ts';
import { KeyColumns } from '../../src/storage/clickhouse/clickhouse-key-columns.ts';
import { formColumnsOf } from '../../src/storage/clickhouse/clickhouse-rows.ts';
import { ingest, startServer, type TestServer } from '../helpers/engine-server.ts';
import { expectClose } from '../helpers/expect-close.ts';
import { fixtureEvents, NOW } from '../helpers/fixture-events.ts';
import { referenceAnswer } from '../helpers/reference.ts';

/**
 * `analytics-engine load --clickhouse URL`, run as users run it: the same bad-line report, exit
 * code and summary as the same file loaded into DuckDB, and the good events answer the
 * reference queries.
 */

const BIN = join(import.meta.dirname, '../../bin/analytics-engine.mjs');
const url = inject('clickhouseUrl');
const password = inject('clickhousePassword');
// The CLI's database prefix is `analytics_`: a workspace name of its own keeps it apart.
const WORKSPACE = 'loadedch';
const KEY = 'load-clickhouse-key';
const events = fixtureEvents().slice(-400);
const BAD = [
  'not json',
  '{"json": {"event": "c"}}',
  '[1,2]',
  '{"timestamp": -5, "json": {}}',
  '{"timestamp": 1700000002, "json": "nope"}',
];
let dir: string;
let server: TestServer;

function cli(args: string[]) {
  const env: Record<string, string | undefined> = {
    ...process.env,
    CLICKHOUSE_USER: 'default',
    CLICKHOUSE_PASSWORD: password,
  };
  delete env.INIT_CWD;
  return spawnSync(process.execPath, [BIN, 'load', ...args], { env, encoding: 'utf8', cwd: dir });
}

let clickhouse: ReturnType<typeof cli>;
let duckdb: ReturnType<typeof cli>;
let sorted: ReturnType<typeof cli>;
const SORTED_WORKSPACE = 'loadedchsorted';
let typed: ReturnType<typeof cli>;
const TYPED_WORKSPACE = 'loadedchtyped';
/** The top-level keys the typed workspace gives columns to; the fixture has more. */
const TYPED_KEYS = ['event', 'price'];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'engine-load-ch-'));
  const lines = events.map((e) => JSON.stringify(e));
  // Bad lines among the good, and one line as the hosted service's clients write it (text).
  for (const [i, bad] of BAD.entries()) lines.splice(1 + i * 50, 0, bad);
  lines.splice(3, 0, JSON.stringify({ timestamp: NOW - 5, json: '{"event":"as text"}' }));
  writeFileSync(join(dir, 'events.ndjson'), `${lines.join('\n')}\n`);
  clickhouse = cli(['--clickhouse', url, '--workspace', WORKSPACE, 'events.ndjson']);
  duckdb = cli(['--data', 'duck', '--workspace', WORKSPACE, 'events.ndjson']);
  sorted = cli([
    '--clickhouse',
    url,
    '--workspace',
    SORTED_WORKSPACE,
    '--clickhouse-sort-field',
    'event',
    'events.ndjson',
  ]);
  typed = cli([
    '--clickhouse',
    url,
    '--workspace',
    TYPED_WORKSPACE,
    '--clickhouse-key-columns',
    TYPED_KEYS.join(','),
    'events.ndjson',
  ]);
  server = await startServer({
    workspaces: { [WORKSPACE]: KEY },
    now: () => NOW,
    clickhouse: { url, password, databasePrefix: 'analytics_' },
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('load --clickhouse', () => {
  test('bad lines, exit code and count as the DuckDB load reports them', () => {
    expect(clickhouse.status, clickhouse.stderr).toBe(1);
    expect(clickhouse.stderr.trim().split('\n')).toEqual(duckdb.stderr.trim().split('\n'));
    expect(clickhouse.stderr.trim().split('\n')).toHaveLength(BAD.length);
    const loaded = /^loaded ([\d,]+) events into loadedch\/all_events \(ClickHouse\)/;
    expect(clickhouse.stdout).toMatch(loaded);
    expect(clickhouse.stdout.match(loaded)?.[1]).toBe((events.length + 1).toLocaleString('en-US'));
    expect(clickhouse.stdout).toMatch(/; 5 bad lines skipped/);
  });

  test('the events answer as the reference', async () => {
    const all = [...events, { timestamp: NOW - 5, json: { event: 'as text' } }];
    for (const q of [
      { graph_type: 'Table', split: 'event' },
      { graph_type: 'Single Line', granularity: 'Hour', aggregation: 'Avg', metric: 'price' },
      { graph_type: 'Samples', start: NOW - 60 },
    ]) {
      const body = { api_key: KEY, start: NOW - 86_400 * 3, end: NOW, IANA_time_zone: 'UTC', ...q };
      const answer = await server.post('/api/visualize/data', body);
      expect(answer.status, answer.text).toBe(200);
      expectClose(answer.body, referenceAnswer(all, body, NOW), JSON.stringify(q));
    }
  });

  test('with --clickhouse-sort-field, every part is written with its form columns and the projection', async () => {
    expect(sorted.status, sorted.stderr).toBe(1);
    const direct = createClient({ url, password });
    const ask = async <T>(query: string) =>
      (await (await direct.query({ query, format: 'JSONEachRow' })).json()) as T[];
    try {
      const db = `'analytics_${SORTED_WORKSPACE}'`;
      const forms = await ask<{ name: string }>(
        `SELECT name FROM system.columns WHERE database = ${db} AND table = '_engine_events' AND match(name, '^[ns]_')`,
      );
      // event, user, price, plan… : every top-level key of the fixture has its two columns.
      expect(forms.length).toBeGreaterThanOrEqual(6);
      const [projection] = await ask<{ query: string }>(
        `SELECT query FROM system.projections WHERE database = ${db} AND table = '_engine_events'`,
      );
      for (const { name } of forms) expect(projection?.query).toContain(name);
      // Nothing left to do after the load: no mutation waits, and each part has the projection
      // and holds the form columns on disk (not computed from DEFAULT when read).
      const mutations = await ask<{ n: string }>(
        `SELECT count() AS n FROM system.mutations WHERE database = ${db} AND NOT is_done`,
      );
      expect(Number(mutations[0]?.n)).toBe(0);
      const parts = await ask<{ name: string }>(
        `SELECT name FROM system.parts WHERE database = ${db} AND table = '_engine_events' AND active`,
      );
      const projected = await ask<{ parent_name: string }>(
        `SELECT parent_name FROM system.projection_parts WHERE database = ${db} AND table = '_engine_events' AND active`,
      );
      expect(parts.length).toBeGreaterThan(0);
      expect(projected.map((p) => p.parent_name).sort()).toEqual(parts.map((p) => p.name).sort());
      const columns = await ask<{ column: string }>(
        `SELECT DISTINCT column FROM system.parts_columns WHERE database = ${db} AND table = '_engine_events' AND active`,
      );
      for (const { name } of forms) expect(columns.map((c) => c.column)).toContain(name);
    } finally {
      await direct.close();
    }
  });

  test('with --clickhouse-key-columns, only those keys have columns, and the rest answer from the payload', async () => {
    expect(typed.status, typed.stderr).toBe(1);
    const summary = (stdout: string, workspace: string) =>
      stdout.replace(workspace, '<workspace>').replace(/ in [\d.]+ s/, '');
    expect(summary(typed.stdout, TYPED_WORKSPACE)).toBe(summary(clickhouse.stdout, WORKSPACE));
    const direct = createClient({ url, password });
    const typedKeys = async () =>
      (
        (await (
          await direct.query({
            query: `SELECT comment FROM system.columns WHERE database = {db:String}
                    AND table = '_engine_events' AND match(name, '^s_')`,
            query_params: { db: `analytics_${TYPED_WORKSPACE}` },
            format: 'JSONEachRow',
          })
        ).json()) as Array<{ comment: string }>
      )
        .map(({ comment }) => (JSON.parse(comment) as string[])[0])
        .sort();
    expect(await typedKeys()).toEqual([...TYPED_KEYS].sort());
    const typedServer = await startServer({
      workspaces: { [TYPED_WORKSPACE]: KEY },
      now: () => NOW,
      clickhouse: { url, password, databasePrefix: 'analytics_', keyColumns: TYPED_KEYS },
      // The rollups read their key's column, which it gets although the load gave it none.
      rollups: { [TYPED_WORKSPACE]: { keys: ['plan'], sums: ['price'] } },
      rollupReads: 'always',
    });
    try {
      expect(await typedKeys()).toEqual(['event', 'plan', 'price']);
      // Ingest meets keys of its own, typed and not.
      const more = [
        { timestamp: NOW - 4, json: { event: 'late', price: 7, plan: 'pro', campaign: 'fall' } },
        { timestamp: NOW - 3, json: { event: 'late', campaign: 'spring', plan: 'team' } },
      ];
      await ingest(typedServer, more, 'all_events', KEY);
      expect(await typedKeys()).toEqual(['event', 'plan', 'price']);
      const all = [...events, { timestamp: NOW - 5, json: { event: 'as text' } }, ...more];
      for (const q of [
        { graph_type: 'Table', split: 'plan' },
        { graph_type: 'Table', split: 'campaign', aggregation: 'Sum', metric: 'price' },
        { graph_type: 'Multi Line', split: 'country', granularity: 'Hour' },
        {
          graph_type: 'Single Value',
          aggregation: 'Avg',
          metric: 'price',
          filters: [['plan', '=', 'pro']],
        },
        { graph_type: 'Bar Chart', split: 'device.os', filters: [['event', '!=', 'login']] },
      ]) {
        const body = {
          api_key: KEY,
          start: NOW - 86_400 * 3,
          end: NOW,
          IANA_time_zone: 'UTC',
          ...q,
        };
        const answer = await typedServer.post('/api/visualize/data', body);
        expect(answer.status, answer.text).toBe(200);
        expectClose(answer.body, referenceAnswer(all, body, NOW), JSON.stringify(q));
      }
    } finally {
      await typedServer.close();
      await direct.close();
    }
  });

  test("the parse workers write the typed keys' form columns only", () => {
    const lines = [
      { timestamp: NOW, json: { event: 'a', plan: 'pro', user: { id: 1 } } },
      { timestamp: NOW, json: { event: 'b', price: 3 } },
    ];
    const header = (keys?: string[]) => {
      const bytes = new TextEncoder().encode(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
      const chunk = parseChunk({
        id: 0,
        bytes,
        file: '',
        clickhouse: { collection: 'c', seqBase: '1', ...(keys ? { keys } : {}) },
      });
      return chunk.tsv?.split('\n')[0]?.split('\t');
    };
    const forms = (...paths: string[][]) =>
      paths.flatMap((path) => [formColumnsOf(path).number, formColumnsOf(path).string]);
    const row = (...paths: string[][]) => [
      'collection',
      'timestamp',
      'json',
      ...forms(...paths),
      'seq',
    ];
    expect(header(['event', 'user'])).toEqual(row(['event'], ['user', 'id']));
    expect(header()).toEqual(row(['event'], ['plan'], ['user', 'id'], ['price']));
  });

  describe('engines opening the sorted workspace', () => {
    const db = `analytics_${SORTED_WORKSPACE}`;
    let direct: ReturnType<typeof createClient>;
    const ask = async <T>(query: string) =>
      (await (await direct.query({ query, format: 'JSONEachRow' })).json()) as T[];
    const count = async (where: string) =>
      Number(
        (
          await ask<{ n: string }>(
            `SELECT count() AS n FROM system.mutations WHERE database = '${db}' AND ${where}`,
          )
        )[0]?.n,
      );
    const materializes = () => count(`position(command, 'MATERIALIZE PROJECTION') > 0`);
    /** Opens `n` engines with the load's sort field at once and waits for their background step. */
    const open = async (n: number) => {
      const engines = Array.from(
        { length: n },
        () => new KeyColumns(direct, db, { sortField: 'event' }),
      );
      await Promise.all(engines.map((e) => e.open()));
      await Promise.all(engines.map((e) => e.project()));
    };
    /** Active parts of the event table without the sort projection. */
    const partsWithout = async () =>
      ask<{ name: string }>(
        `SELECT name FROM system.parts WHERE database = '${db}' AND table = '_engine_events'
         AND active AND length(projections) = 0`,
      );
    beforeAll(() => {
      direct = createClient({ url, password });
    });
    afterAll(async () => {
      await direct.close();
    });

    test('after the load, an engine opening it starts no mutation', async () => {
      const columns = `SELECT name FROM system.columns WHERE database = '${db}' ORDER BY name`;
      const before = { mutations: await count('1'), columns: await ask(columns) };
      await open(1);
      expect(await count('1')).toBe(before.mutations);
      // The fixture's `device` holds objects: its keys have columns, it has none of its own.
      expect(await ask(columns)).toEqual(before.columns);
    });

    test('parts without the projection, or a table without it, get it built once by engines opening together', async () => {
      const [{ name, query } = { name: '', query: '' }] = await ask<{
        name: string;
        query: string;
      }>(`SELECT name, query FROM system.projections WHERE database = '${db}'`);
      expect(name).toMatch(/^p_/);
      const table = `${db}._engine_events`;
      // Its definition added back without a MATERIALIZE: an engine stopped between the two.
      await direct.command({ query: `ALTER TABLE ${table} DROP PROJECTION ${name}` });
      await direct.command({ query: `ALTER TABLE ${table} ADD PROJECTION ${name} (${query})` });
      expect((await partsWithout()).length).toBeGreaterThan(0);
      let before = await materializes();
      await open(2);
      expect(await materializes()).toBe(before + 1);
      expect(await partsWithout()).toEqual([]);
      // No projection at all.
      await direct.command({ query: `ALTER TABLE ${table} DROP PROJECTION ${name}` });
      before = await materializes();
      await open(2);
      expect(await materializes()).toBe(before + 1);
      expect(await partsWithout()).toEqual([]);
      const after = await ask<{ name: string }>(
        `SELECT name FROM system.projections WHERE database = '${db}'`,
      );
      expect(after).toEqual([{ name }]);
      expect(await count('NOT is_done')).toBe(0);
    });
  });
});
