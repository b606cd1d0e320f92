import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CollectionQuery } from '@analytics-chart/protocol';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bindDuckDbField } from '../src/collection/bind/duckdb/bind-duckdb-query.ts';
import { fieldsSql } from '../src/collection/bind/duckdb/field-sql.ts';
import { boundFilters } from '../src/collection/bind/duckdb/filter-sql.ts';
import { appendRecords } from '../src/ingest/append-events.ts';
import { loadNdjson } from '../src/ingest/load-ndjson.ts';
import { StagedLoad } from '../src/ingest/staged-load.ts';
import {
  type CollectionEntry,
  ENGINE_SCHEMA,
  keyColumn,
  SEQ_COLUMN,
  segmentTableName,
} from '../src/storage/duckdb/catalog.ts';
import {
  appendStaged,
  chooseClusterKey,
  clusterCollection,
  timeRuns,
} from '../src/storage/duckdb/cluster-rows.ts';
import { DuckDBInstance } from '../src/storage/duckdb/duckdb-api.ts';
import type { NamedParams } from '../src/storage/duckdb/sql-params.ts';
import { WorkspaceDb } from '../src/storage/duckdb/workspace-db.ts';
import { API_KEY, ingest, startServer, type TestServer } from './helpers/engine-server.ts';
import { expectClose } from './helpers/expect-close.ts';
import { NOW, random } from './helpers/fixture-events.ts';
import { type FixtureEvent, referenceAnswer } from './helpers/reference.ts';

/**
 * Clustering a collection's rows by one key (what `engine load` does after loading): which key
 * the engine picks, that every answer stays the reference's on a key holding every kind of
 * value (and none), that ingest order survives for Samples and for later appends, and that a
 * filter on the key then reads only its own rows.
 */

const DAY = 86_400;

/**
 * Events whose `kind` decides which other keys they hold, with `kind` a string, a number, a
 * numeric string, a boolean, an array, null or missing; `tenant` has fewer values but says
 * nothing about the rest, `user` has too many. Many events share a second.
 */
function kindEvents(count: number, seed: number, from: number, to: number): FixtureEvent[] {
  const r = random(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(r() * items.length)] as T;
  const times = Array.from({ length: count }, () => from + Math.floor(r() * (to - from)));
  times.sort((a, b) => a - b);
  const kinds = ['view', 'view', 'view', 'buy', 'err', 42, '42', true, ['a', 'b'], null, undefined];
  return times.map((timestamp, i) => {
    const kind = pick(kinds);
    const json: Record<string, unknown> = {
      id: i,
      tenant: pick(['acme', 'globex']),
      user: `u${Math.floor(r() * 300)}`,
    };
    if (kind !== undefined) json.kind = kind;
    if (kind === 'buy') json.price = pick([9.99, 19.5, 29, '12.5', 5]);
    if (kind === 'err') json.code = pick([500, 404, 'E1']);
    if (kind === 42 || kind === '42') json.n = Math.floor(r() * 10);
    if (kind === true) json.flag = 'on';
    if (Array.isArray(kind)) json.list = [1, 2];
    if (kind === null) json.empty = true;
    return { timestamp, json };
  });
}

describe('the clustering key', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'engine-cluster-key-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function chosen(events: FixtureEvent[]): Promise<string | null> {
    const file = join(dir, `${Math.random().toString(36).slice(2)}.duckdb`);
    const db = await WorkspaceDb.open(file);
    try {
      // Rows through the engine's own append path, as /api/bulk-log writes them.
      await db.write(async (tx) =>
        appendRecords(
          tx,
          await tx.collection('c'),
          events.map((e) => ({
            timestamp: e.timestamp,
            payload: JSON.stringify(e.json),
            json: e.json,
          })),
        ),
      );
      const entry = db.catalog.get('c') as CollectionEntry;
      const key = await db.read((conn) =>
        chooseClusterKey(conn, entry, entry.segments[0] as CollectionEntry['segments'][0]),
      );
      return key?.field ?? null;
    } finally {
      await db.close();
    }
  }

  test('the key whose value decides which other keys an event holds, not the one with fewest values', async () => {
    expect(await chosen(kindEvents(3000, 1, NOW - 10 * DAY, NOW))).toBe('kind');
  });

  test('where the rollups keep the key, loads and compaction order rows by time instead', async () => {
    // Newest first in the file, so that neither order is the file's own.
    const events = kindEvents(3000, 3, NOW - 10 * DAY, NOW).reverse();
    const ndjson = join(dir, 'newest-first.ndjson');
    writeFileSync(ndjson, events.map((e) => JSON.stringify(e)).join('\n'));
    const layout = async (rollups: { keys: string[]; sums: string[] } | undefined) => {
      const staging = join(dir, `staging-${rollups ? 'on' : 'off'}`);
      mkdirSync(staging);
      const file = join(dir, `layout-${rollups ? 'on' : 'off'}.duckdb`);
      const db = await WorkspaceDb.open(file, {
        stagingDir: staging,
        ...(rollups ? { rollups } : {}),
      });
      try {
        const staged = new StagedLoad(db, 'c');
        await loadNdjson(db, 'c', ndjson, { workers: 1, staged });
        const loaded = await appendStaged(db, 'c', staged.segments(), { field: 'kind' });
        const timeOrdered = () =>
          db.read(async (conn) => {
            const table = (db.catalog.get('c') as CollectionEntry).segments[0]?.table;
            const r = await conn.runAndReadAll(
              `SELECT bool_and(ts >= prev) FROM (SELECT "timestamp" AS ts, lag("timestamp", 1, 0) OVER (ORDER BY rowid) AS prev FROM ${table})`,
            );
            return r.getRows()[0]?.[0];
          });
        const afterLoad = await timeOrdered();
        const compacted = await clusterCollection(db, 'c', { field: 'kind' });
        return { loaded, afterLoad, compacted, afterCompaction: await timeOrdered() };
      } finally {
        await db.close();
      }
    };
    const kept = await layout({ keys: ['kind'], sums: [] });
    expect(kept.loaded).toMatchObject([{ field: 'kind', byTime: true, rows: 3000 }]);
    expect(kept.compacted).toMatchObject([{ field: 'kind', byTime: true, rows: 3000 }]);
    expect([kept.afterLoad, kept.afterCompaction]).toEqual([true, true]);
    const plain = await layout(undefined);
    expect(plain.loaded[0]?.byTime).toBeUndefined();
    expect(plain.compacted[0]?.byTime).toBeUndefined();
    expect([plain.afterLoad, plain.afterCompaction]).toEqual([false, false]);
  });

  test('a load that would leave more time-ordered runs than allowed rewrites the segment in one time order', async () => {
    // Three loads over the whole ten days (the second may leave two runs, the third one), then
    // one of the day after, which continues the last run. Rows this few share one row group,
    // where DuckDB's statistics see one run (next test).
    const file = join(dir, 'runs.duckdb');
    const loads: Array<{ rewritten: boolean; ordered: unknown; seqs: number[] }> = [];
    for (const [seed, maxTimeRuns, from, to] of [
      [11, 1, NOW - 10 * DAY, NOW],
      [12, 2, NOW - 10 * DAY, NOW],
      [13, 1, NOW - 10 * DAY, NOW],
      [14, 1, NOW, NOW + DAY],
    ] as const) {
      const events = kindEvents(1000, seed, from, to).reverse();
      const ndjson = join(dir, `runs-${seed}.ndjson`);
      writeFileSync(ndjson, events.map((e) => JSON.stringify(e)).join('\n'));
      const staging = join(dir, `runs-staging-${seed}`);
      mkdirSync(staging);
      const db = await WorkspaceDb.open(file, {
        stagingDir: staging,
        rollups: { keys: ['kind'], sums: [] },
      });
      try {
        const staged = new StagedLoad(db, 'c');
        await loadNdjson(db, 'c', ndjson, { workers: 1, staged });
        const [done] = await appendStaged(db, 'c', staged.segments(), {
          field: 'kind',
          maxTimeRuns,
        });
        const table = (db.catalog.get('c') as CollectionEntry).segments[0]?.table;
        const [ordered, seqs] = await db.read(async (conn) => [
          (
            await conn.runAndReadAll(
              `SELECT bool_and(ts >= prev) FROM (SELECT "timestamp" AS ts, lag("timestamp", 1, 0) OVER (ORDER BY rowid) AS prev FROM ${table})`,
            )
          ).getRows()[0]?.[0],
          (
            await conn.runAndReadAll(
              `SELECT "${SEQ_COLUMN}" FROM ${table} ORDER BY "timestamp", "${SEQ_COLUMN}"`,
            )
          )
            .getRows()
            .map((r) => Number(r[0])),
        ]);
        loads.push({ rewritten: done?.rewritten === true, ordered, seqs: seqs as number[] });
      } finally {
        await db.close();
      }
    }
    expect(loads.map((l) => [l.rewritten, l.ordered])).toEqual([
      [false, true],
      [false, false],
      [true, true],
      [false, true],
    ]);
    // Ingest order kept: the first two loads' rows keep theirs, the third load's come after.
    const last = loads[2]?.seqs as number[];
    expect(loads[3]?.seqs.slice(0, 3000)).toEqual(last);
    expect([...last].sort((a, b) => a - b)).toEqual(Array.from({ length: 3000 }, (_, i) => i));
    expect(last.filter((seq) => seq < 2000)).toEqual(loads[1]?.seqs);
  });

  test('a load in time order is one run however many staged runs it sorts in', async () => {
    // A second load over the same ten days, its file in time order but staged and sorted in
    // runs of a few kB: it adds one run, so a limit of two runs leaves the table as it is.
    const file = join(dir, 'one-run.duckdb');
    const results: Array<{ rewritten: boolean; breaks: number; staged: number }> = [];
    for (const seed of [21, 22]) {
      const events = kindEvents(1000, seed, NOW - 10 * DAY, NOW);
      const ndjson = join(dir, `one-run-${seed}.ndjson`);
      writeFileSync(ndjson, events.map((e) => JSON.stringify(e)).join('\n'));
      const staging = join(dir, `one-run-staging-${seed}`);
      mkdirSync(staging);
      const db = await WorkspaceDb.open(file, {
        stagingDir: staging,
        rollups: { keys: ['kind'], sums: [] },
      });
      try {
        const staged = new StagedLoad(db, 'c', { runBytes: 20_000 });
        await loadNdjson(db, 'c', ndjson, { workers: 0, chunkBytes: 8192, staged });
        const runs = staged.segments().get(0)?.runs.length ?? 0;
        const [done] = await appendStaged(db, 'c', staged.segments(), {
          field: 'kind',
          maxTimeRuns: 2,
        });
        const table = (db.catalog.get('c') as CollectionEntry).segments[0]?.table;
        const breaks = await db.read(async (conn) =>
          Number(
            (
              await conn.runAndReadAll(
                `SELECT count(*) FILTER (WHERE ts < prev) FROM (SELECT "timestamp" AS ts, lag("timestamp") OVER (ORDER BY rowid) AS prev FROM ${table})`,
              )
            ).getRows()[0]?.[0],
          ),
        );
        results.push({ rewritten: done?.rewritten === true, breaks, staged: runs });
      } finally {
        await db.close();
      }
    }
    expect(results[1]?.staged).toBeGreaterThan(3);
    expect(results.map(({ rewritten, breaks }) => [rewritten, breaks])).toEqual([
      [false, 0],
      [false, 1],
    ]);
  });

  test('time-ordered runs counted from the row groups’ statistics', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    try {
      // Statistics of the row groups written to a file, as a load finds its workspace's.
      await conn.run(
        `ATTACH '${join(dir, 'runs-stats.duckdb')}' AS small_groups (ROW_GROUP_SIZE 2048)`,
      );
      await conn.run('USE small_groups');
      await conn.run(`CREATE SCHEMA ${ENGINE_SCHEMA}`);
      const table = `${ENGINE_SCHEMA}.${segmentTableName(7, 0)}`;
      await conn.run(`CREATE TABLE ${table} ("timestamp" BIGINT NOT NULL, v INTEGER)`);
      const counts: number[] = [(await timeRuns(conn, 7, 0)).runs];
      // Runs of whole row groups over the same seconds, as loads of whole ranges append them.
      for (let run = 0; run < 3; run++) {
        await conn.run(
          `INSERT INTO ${table} SELECT 1000 + i * 3 + ${run}, i FROM range(4096) t(i) ORDER BY i`,
        );
        await conn.run('CHECKPOINT');
        counts.push((await timeRuns(conn, 7, 0)).runs);
      }
      // Newer seconds than every row so far continue the last run.
      await conn.run(`INSERT INTO ${table} SELECT 100000 + i, i FROM range(4096) t(i)`);
      await conn.run('CHECKPOINT');
      counts.push((await timeRuns(conn, 7, 0)).runs);
      expect(counts).toEqual([0, 1, 2, 3, 3]);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });

  test('none when every event holds the same keys', async () => {
    const r = random(2);
    const events = Array.from({ length: 2000 }, (_, i) => ({
      timestamp: NOW - 2000 + i,
      json: { tenant: r() < 0.5 ? 'a' : 'b', plan: ['x', 'y', 'z'][i % 3], v: i },
    }));
    expect(await chosen(events)).toBe(null);
  });
});

describe('answers after clustering', () => {
  let server: TestServer;
  let events: FixtureEvent[];

  /** Clusters the server's collection by `kind` with its data directory free. */
  async function cluster(field?: string) {
    await server.restart(async (dataDir) => {
      const db = await WorkspaceDb.open(join(dataDir, 'default.duckdb'));
      try {
        const done = await clusterCollection(db, 'all_events', field ? { field } : {});
        expect(done.map((d) => d.field)).toEqual(['kind']);
      } finally {
        await db.close();
      }
    });
  }

  /** Filters in the request's shapes: a flat list is one AND group, a list of lists OR groups. */
  const FILTERS: unknown[] = [
    [['kind', '=', 'buy']],
    [['kind', '=', 42]],
    [['kind', '=', '42']],
    [['kind', '=', ' 42 ']],
    [['kind', '=', true]],
    [['kind', '=', 'true']],
    [['kind', '=', '["a","b"]']],
    [['kind', '≠', 'view']],
    [['kind', '≠', 42]],
    [['kind', 'includes', 'a']],
    [['kind', 'includes', '4']],
    [['kind', 'excludes', 'e']],
    [['kind', '>', 10]],
    [['kind', '<', '100']],
    [[['kind', '=', 'err']], [['kind', '=', 'buy']]],
    [
      ['kind', '=', 'buy'],
      ['price', '>', 10],
    ],
    [
      ['tenant', '=', 'acme'],
      ['kind', '=', 'nothing'],
    ],
    [
      [
        ['kind', '≠', 'view'],
        ['tenant', '=', 'acme'],
      ],
      [['kind', '=', 'view']],
    ],
  ];

  const BODIES: Array<Record<string, unknown>> = [
    ...FILTERS.map((filters) => ({
      graph_type: 'Single Value',
      aggregation: 'Count',
      filters,
      start: '30 days ago',
      end: 'now',
      IANA_time_zone: 'UTC',
    })),
    {
      graph_type: 'Single Value',
      aggregation: 'Sum',
      metric: 'price',
      filters: [['kind', '=', 'buy']],
      start: '30 days ago',
      end: 'now',
      IANA_time_zone: 'UTC',
    },
    {
      graph_type: 'Single Value',
      aggregation: 'P95',
      metric: 'price',
      start: '30 days ago',
      end: 'now',
      IANA_time_zone: 'UTC',
    },
    {
      graph_type: 'Single Line',
      granularity: 'Day',
      start: '30 days ago',
      end: 'now',
      IANA_time_zone: 'America/Los_Angeles',
    },
    {
      graph_type: 'Multi Line',
      split: 'kind',
      granularity: 'Hour',
      start: '3 days ago',
      end: 'now',
      IANA_time_zone: 'America/Los_Angeles',
    },
    {
      graph_type: 'Ratio Line',
      granularity: 'Day',
      numerator_filters: [['kind', '=', 'buy']],
      denominator_filters: [['kind', '≠', 'buy']],
      start: '10 days ago',
      end: 'now',
      IANA_time_zone: 'UTC',
    },
    { graph_type: 'Table', split: 'kind', start: '30 days ago', end: 'now', IANA_time_zone: 'UTC' },
    // Samples windows of at most 50 events, many of them sharing seconds.
    ...['Ascending', 'Descending'].flatMap((order) => [
      { graph_type: 'Samples', order, start: NOW - 400, end: NOW - 330 },
      {
        graph_type: 'Samples',
        order,
        start: NOW - 330,
        end: 'now',
        filters: [['kind', '=', 'err']],
      },
    ]),
  ];

  async function checkAll(all: FixtureEvent[], bodies = BODIES) {
    for (const body of bodies) {
      const request = { api_key: API_KEY, ...body };
      let expected: unknown;
      try {
        expected = referenceAnswer(all, request, NOW);
      } catch (error) {
        // A Samples window the reference cannot answer in one page would be a bad fixture.
        throw new Error(`${(error as Error).message} for ${JSON.stringify(body)}`);
      }
      const answer = await server.post('/api/visualize/data', request);
      if (answer.status !== 200) expect.fail(`${answer.status}: ${answer.text}`);
      expectClose(answer.body, expected, JSON.stringify(body));
    }
  }

  beforeAll(async () => {
    server = await startServer({ now: () => NOW });
    // Dense at the end: the Samples windows hold up to 50 events, several to a second.
    events = [
      ...kindEvents(3000, 3, NOW - 40 * DAY, NOW - 400),
      ...kindEvents(45, 4, NOW - 400, NOW - 330),
      ...kindEvents(300, 5, NOW - 330, NOW),
    ];
    await ingest(server, events);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  test('every answer is the reference’s before and after the rows are reordered by a mixed key', async () => {
    await checkAll(events);
    await cluster('kind');
    await checkAll(events);
  }, 120_000);

  test('events appended after the reordering come after it in ingest order, also within a second', async () => {
    // Some seconds already hold reordered events; the new ones follow them.
    const more = kindEvents(40, 6, NOW - 400, NOW - 330).map((e, i) => ({
      timestamp: e.timestamp,
      json: { ...e.json, id: 10_000 + i },
    }));
    await ingest(server, more);
    const all = [...events, ...more].map((e, i) => ({ ...e, i }));
    all.sort((a, b) => a.timestamp - b.timestamp || a.i - b.i);
    // The window of the first Samples bodies now holds 85 events: check it in two halves.
    const window = all.filter((e) => e.timestamp >= NOW - 400 && e.timestamp <= NOW - 330);
    const cut = (window[40] as FixtureEvent).timestamp;
    for (const [start, end] of [
      [NOW - 401, cut],
      [cut, NOW - 329],
    ]) {
      for (const order of ['Ascending', 'Descending']) {
        const request = { api_key: API_KEY, graph_type: 'Samples', order, start, end };
        const answer = await server.post('/api/visualize/data', request);
        expect(answer.status).toBe(200);
        expect(answer.body).toEqual(referenceAnswer([...events, ...more], request, NOW));
      }
    }
    // Reordering again keeps that order too (a seq from before and row ids after it).
    await cluster('kind');
    await checkAll(
      [...events, ...more],
      BODIES.filter((b) => b.start !== NOW - 400),
    );
  }, 120_000);

  test('SQL mode reads the reordered table as before', async () => {
    const answer = await server.post('/api/visualize/data', {
      api_key: API_KEY,
      graph_type: 'Table',
      sql_query:
        "SELECT count(*) AS n FROM all_events WHERE json_extract_string(json, '$.kind') = 'buy'",
    });
    expect(answer.status).toBe(200);
    // The events of the tests above: the fixture and the 40 appended.
    const all = [...events, ...kindEvents(40, 6, NOW - 400, NOW - 330)];
    expect(answer.body.result).toEqual([{ n: all.filter((e) => e.json.kind === 'buy').length }]);
  });
});

describe('a filter on the clustering key reads only its own rows', () => {
  const ROWS = 4 * 122_880;
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'engine-cluster-scan-'));
    const staging = join(dir, 'staging');
    mkdirSync(staging);
    const r = random(9);
    const lines: string[] = [];
    for (let i = 0; i < ROWS; i++) {
      const kind = ['view', 'view', 'view', 'view', 'view', 'view', 'buy', 'err'][
        Math.floor(r() * 8)
      ];
      const json: Record<string, unknown> = { kind };
      if (kind === 'buy') json.price = i % 100;
      if (kind === 'err') json.code = 500;
      lines.push(JSON.stringify({ timestamp: NOW - ROWS + i, json }));
    }
    writeFileSync(join(dir, 'events.ndjson'), `${lines.join('\n')}\n`);
    file = join(dir, 'w.duckdb');
    const db = await WorkspaceDb.open(file, { stagingDir: staging });
    try {
      await loadNdjson(db, 'c', join(dir, 'events.ndjson'), { workers: 1 });
    } finally {
      await db.close();
    }
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The rows DuckDB's scan reads for the engine's filter `kind = buy`, and the answer. */
  async function scanned(): Promise<{ rows: number; sum: number; reordered: boolean }> {
    const db = await WorkspaceDb.open(file);
    let sql: string;
    let values: Record<string, unknown>;
    let reordered: boolean;
    try {
      const entry = db.catalog.get('c') as CollectionEntry;
      reordered = entry.segments[0]?.reordered === true;
      const params: NamedParams = {};
      const found = db.catalog.lookup('c', ['kind', 'price']);
      const query = {
        filters: [[['kind', '=', 'buy']]],
        split: null,
      } as unknown as CollectionQuery;
      const fields = fieldsSql(
        ['kind', 'price'].map((name) =>
          bindDuckDbField(entry, name, found?.fields.get(name) ?? []),
        ),
        [], // no split and no includes/excludes: no field is read as text
        params,
      );
      const where = boundFilters(query, fields, params).filters;
      const price = fields.get('price')?.number as string;
      sql = `SELECT sum(${price}) FROM ${entry.table} WHERE ${where}`;
      // The parameters this statement names (bind writes every form of every field).
      values = Object.fromEntries(
        Object.entries(params)
          .filter(([name]) => new RegExp(`\\$${name}\\b`).test(sql))
          .map(([name, p]) => [name, p.value]),
      );
    } finally {
      await db.close();
    }
    // A plain DuckDB on the closed file: the workspace's configuration is locked, profiling off.
    const profile = join(dir, 'profile.json');
    const instance = await DuckDBInstance.create(file);
    try {
      const conn = await instance.connect();
      await conn.run(`SET enable_profiling = 'json'`);
      await conn.run(`SET profiling_output = '${profile}'`);
      await conn.run(`SET custom_profiling_settings = '{"CUMULATIVE_ROWS_SCANNED": "true"}'`);
      const reader = await conn.runAndReadAll(sql, values as never);
      const sum = Number(reader.getRows()[0]?.[0]);
      conn.closeSync();
      const rows = (
        JSON.parse(readFileSync(profile, 'utf8')) as { cumulative_rows_scanned: number }
      ).cumulative_rows_scanned;
      return { rows, sum, reordered };
    } finally {
      instance.closeSync();
    }
  }

  test('in ingest order every row group is read; clustered, little more than the value’s own rows', async () => {
    const before = await scanned();
    expect(before.reordered).toBe(false);
    expect(before.rows).toBe(ROWS);
    const db = await WorkspaceDb.open(file);
    try {
      expect((await clusterCollection(db, 'c')).map((d) => d.field)).toEqual(['kind']);
      const entry = db.catalog.get('c') as CollectionEntry;
      const columns = await db.read(async (conn) =>
        (await conn.runAndReadAll(`SELECT * FROM ${entry.table} LIMIT 0`)).columnNames(),
      );
      expect(columns).toContain(SEQ_COLUMN);
      expect(columns).toContain(
        keyColumn(entry.keys.find((k) => k.field === 'kind') as never, 's').replaceAll('"', ''),
      );
    } finally {
      await db.close();
    }
    const after = await scanned();
    expect(after.reordered).toBe(true);
    expect(after.sum).toBe(before.sum);
    // About an eighth of the events are purchases; their run spans at most two row groups.
    expect(after.rows).toBeLessThanOrEqual(2 * 122_880);
    expect(after.rows).toBeLessThan(ROWS / 2);
  }, 120_000);
});
