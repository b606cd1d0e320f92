import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createEngine, type Engine } from '../src/index.ts';
import { DuckDBInstance } from '../src/storage/duckdb/duckdb-api.ts';

/**
 * The `analytics-engine` CLI as users run it, in a child process: the compiled
 * `dist/cli/main.js` that the published package's bin names (the global setup keeps it fresh).
 */

const BIN = join(import.meta.dirname, '../dist/cli/main.js');
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'engine-cli-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function start(args: string[], env: Record<string, string> = {}): ChildProcess {
  const childEnv: Record<string, string | undefined> = { ...process.env, ...env };
  delete childEnv.INIT_CWD;
  return spawn(process.execPath, [BIN, ...args], {
    cwd: dir,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function run(args: string[], env: Record<string, string> = {}) {
  const child = start(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => {
    stdout += d;
  });
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
}

/**
 * Opens an engine on what a command wrote, to query it. It is sent no ingest bodies, so it starts
 * no body workers (threads that would each load the ingest modules for nothing).
 */
async function withEngine<T>(dataDir: string, fn: (engine: Engine) => Promise<T>): Promise<T> {
  const engine = await createEngine({ dataDir, workspaces: { default: 'k' }, bodyWorkers: 0 });
  try {
    return await fn(engine);
  } finally {
    await engine.close();
  }
}

/** The `i` of each event Samples answers for the window, oldest first. */
async function sampledIds(engine: Engine, start: number, end: number): Promise<number[]> {
  const answer = await engine.query({
    api_key: 'k',
    graph_type: 'Samples',
    order: 'Ascending',
    start,
    end,
  });
  return (answer.body as { result: Array<{ json: { i: number } }> }).result.map((r) => r.json.i);
}

describe('load', () => {
  test('bad lines are reported with number and reason; good ones load; exit code 1', async () => {
    const lines = [
      '{"timestamp": 1700000000, "json": {"event": "a"}}',
      'not json',
      '',
      '{"timestamp": "1700000001", "json": "{\\"event\\":\\"b\\"}"}',
      '{"json": {"event": "c"}}',
      '[1,2]',
      '{"timestamp": -5, "json": {}}',
      '{"timestamp": 1700000002, "json": "nope"}',
      '{"timestamp": 1700000003}',
      '{"timestamp": 1700000004.9, "json": {"event": "d", "deep": {"x": [1, "two"]}}}',
      '{"timestamp": 1700000005, "json": {"event": "e"}}',
    ];
    writeFileSync(join(dir, 'events.ndjson'), lines.join('\n'));
    const result = await run([
      'load',
      '--data',
      'data-load',
      '--collection',
      'loaded',
      'events.ndjson',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      'line 2: is not valid JSON',
      'line 5: timestamp is required',
      'line 6: is not a JSON object',
      'line 7: timestamp: expected Unix seconds (a number from 0 to 253402300799)',
      'line 8: json: is not valid JSON',
      'line 9: json is required',
    ]);
    expect(result.stdout).toMatch(/^loaded 4 events into default\/loaded .*; 6 bad lines skipped/);
    const rows = await withEngine(join(dir, 'data-load'), async (engine) => {
      const answer = await engine.query({
        api_key: 'k',
        collection: 'loaded',
        graph_type: 'Samples',
        order: 'Ascending',
        start: 0,
        end: 'now',
      });
      return answer.body;
    });
    expect(rows).toEqual({
      result: [
        { timestamp: 1700000000, json: { event: 'a' } },
        { timestamp: 1700000001, json: { event: 'b' } },
        { timestamp: 1700000004, json: { event: 'd', deep: { x: [1, 'two'] } } },
        { timestamp: 1700000005, json: { event: 'e' } },
      ],
      metadata: {},
    });
  });

  test('a clean file exits 0 and ends with the count', async () => {
    const lines = Array.from({ length: 3000 }, (_, i) =>
      JSON.stringify({ timestamp: 1_700_000_000 + i, json: { i, even: i % 2 === 0 } }),
    );
    writeFileSync(join(dir, 'clean.ndjson'), `${lines.join('\n')}\n`);
    const result = await run(['load', '--data', 'data-clean', 'clean.ndjson']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^loaded 3,000 events into default\/all_events/);
    const count = await withEngine(join(dir, 'data-clean'), async (engine) => {
      const answer = await engine.query({
        api_key: 'k',
        graph_type: 'Single Value',
        filters: [['even', '=', true]],
        start: 0,
        end: 'now',
      });
      return answer.body;
    });
    expect(count).toEqual({ result: [{ Count: 1500 }], metadata: {} });
  });

  test('rows are ordered by the key that tells events apart, Samples still in file order', async () => {
    // `kind` decides which other key an event holds; three events to a second.
    const events = Array.from({ length: 3000 }, (_, i) => {
      const kind = ['a', 'b', 'c'][(i * 7) % 3] as string;
      return { timestamp: 1_700_000_000 + Math.floor(i / 3), json: { i, kind, [kind]: i } };
    });
    writeFileSync(
      join(dir, 'kinds.ndjson'),
      `${events.map((e) => JSON.stringify(e)).join('\n')}\n`,
    );
    const clustered = await run(['load', '--data', 'data-kinds', 'kinds.ndjson']);
    expect(clustered.code).toBe(0);
    expect(clustered.stdout).toMatch(/^loaded 3,000 events .*; rows ordered by 'kind' and time in/);
    const plain = await run(['load', '--data', 'data-plain', '--no-cluster', 'kinds.ndjson']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).not.toMatch(/rows ordered/);
    const chosen = await run([
      'load',
      '--data',
      'data-chosen',
      '--cluster-by',
      'i',
      'kinds.ndjson',
    ]);
    expect(chosen.stdout).toMatch(/rows ordered by 'i' and time/);
    for (const data of ['data-kinds', 'data-plain', 'data-chosen']) {
      const samples = await withEngine(join(dir, data), async (engine) => {
        const answer = await engine.query({
          api_key: 'k',
          graph_type: 'Samples',
          order: 'Ascending',
          start: 1_700_000_099,
          end: 1_700_000_110,
        });
        return answer.body as { result: Array<{ json: { i: number } }> };
      });
      expect(samples.result.map((r) => r.json.i)).toEqual(
        Array.from({ length: 30 }, (_, n) => 300 + n),
      );
    }
  }, 60_000);

  test('loads into a collection that holds rows: each clustered load an ordered run after the rows before, Samples in file order across loads', async () => {
    // Three files over the same seconds, three events of each to a second; `kind` decides which
    // other key an event holds, and the last file brings a key and a kind the others lack.
    const kinds = [
      ['a', 'b', 'c'],
      ['a', 'b', 'c'],
      ['a', 'd'],
    ] as const;
    const files = kinds.map((names, f) =>
      Array.from({ length: 1500 }, (_, j) => {
        const i = f * 1500 + j;
        const kind = names[(j * 7) % names.length] as string;
        return {
          timestamp: 1_700_000_000 + Math.floor(j / 3),
          json: { i, kind, [kind]: i, ...(f === 2 ? { late: j % 5 } : {}) },
        };
      }),
    );
    files.forEach((events, f) => {
      writeFileSync(
        join(dir, `runs-${f}.ndjson`),
        `${events.map((e) => JSON.stringify(e)).join('\n')}\n`,
      );
    });
    const first = await run(['load', '--data', 'data-runs', 'runs-0.ndjson']);
    expect(first.stdout).toMatch(/rows ordered by 'kind' and time/);
    const plain = await run(['load', '--data', 'data-runs', '--no-cluster', 'runs-1.ndjson']);
    expect(plain.stdout).not.toMatch(/rows ordered/);
    const last = await run(['load', '--data', 'data-runs', 'runs-2.ndjson']);
    expect(last.stdout).toMatch(/^loaded 1,500 events .*; rows ordered by 'kind' and time/);
    const all = files.flat();
    // Ingest order: file order across the files, so within a second by `i`.
    const expected = all
      .filter((e) => e.timestamp > 1_700_000_099 && e.timestamp < 1_700_000_103)
      .sort((x, y) => x.timestamp - y.timestamp || x.json.i - y.json.i)
      .map((e) => e.json.i);
    await withEngine(join(dir, 'data-runs'), async (engine) => {
      expect(await sampledIds(engine, 1_700_000_099, 1_700_000_103)).toEqual(expected);
      for (const kind of ['a', 'b', 'c', 'd']) {
        const count = await engine.query({
          api_key: 'k',
          graph_type: 'Single Value',
          filters: [['kind', '=', kind]],
          start: 1_699_999_000,
          end: 1_700_001_000,
        });
        expect(count.body).toEqual({
          result: [{ Count: all.filter((e) => e.json.kind === kind).length }],
          metadata: {},
        });
      }
      const late = await engine.query({
        api_key: 'k',
        graph_type: 'Single Value',
        aggregation: 'Sum',
        metric: 'late',
        start: 1_699_999_000,
        end: 1_700_001_000,
      });
      expect(late.body).toEqual({
        result: [
          { 'Sum(late)': all.reduce((s, e) => s + ((e.json as { late?: number }).late ?? 0), 0) },
        ],
        metadata: {},
      });
    });
  }, 90_000);

  test('a clustered load whose later events start a new table: every event once, Samples in file order', async () => {
    // The later half brings 60 keys at once, past what widening the first table allows.
    const events = Array.from({ length: 4000 }, (_, i) => {
      const wide =
        i >= 2000 ? Object.fromEntries(Array.from({ length: 60 }, (_, k) => [`w${k}`, i + k])) : {};
      return {
        timestamp: 1_700_000_000 + Math.floor(i / 4),
        json: { i, kind: ['a', 'b'][i % 2], [`only_${i % 2}`]: 1, ...wide },
      };
    });
    writeFileSync(join(dir, 'wide.ndjson'), `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);
    const loaded = await run(['load', '--data', 'data-wide', 'wide.ndjson']);
    expect(loaded.stdout).toMatch(/^loaded 4,000 events .*; rows ordered by 'kind' and time/);
    await withEngine(join(dir, 'data-wide'), async (engine) => {
      expect(await sampledIds(engine, 1_700_000_497, 1_700_000_503)).toEqual(
        Array.from({ length: 20 }, (_, n) => 1992 + n),
      );
      const sum = await engine.query({
        api_key: 'k',
        graph_type: 'Single Value',
        aggregation: 'Sum',
        metric: 'w59',
        filters: [['kind', '=', 'b']],
        start: 1_699_999_000,
        end: 1_700_002_000,
      });
      const expected = events
        .filter((e) => e.json.kind === 'b' && e.json.i >= 2000)
        .reduce((s, e) => s + e.json.i + 59, 0);
      expect(sum.body).toEqual({ result: [{ 'Sum(w59)': expected }], metadata: {} });
    });
    const instance = await DuckDBInstance.create(join(dir, 'data-wide', 'default.duckdb'));
    try {
      const conn = await instance.connect();
      const tables = await conn.runAndReadAll(
        `SELECT count(*) FROM duckdb_tables() WHERE schema_name = '_engine' AND table_name LIKE 'events_%'`,
      );
      expect(Number(tables.getRows()[0]?.[0])).toBe(2);
      conn.closeSync();
    } finally {
      instance.closeSync();
    }
  }, 90_000);

  test('a clustered load killed with SIGKILL at any point leaves none of its events or all of them', async () => {
    // Large enough that the load runs for a while, through the staging and the ordered runs.
    const events = Array.from({ length: 100_000 }, (_, i) => ({
      timestamp: 1_700_000_000 + Math.floor(i / 10),
      json: { i, kind: ['a', 'b', 'c'][i % 3], [`x${i % 3}`]: i },
    }));
    writeFileSync(
      join(dir, 'killed.ndjson'),
      `${events.map((e) => JSON.stringify(e)).join('\n')}\n`,
    );
    // The killed loads leave their staging directories behind.
    const staging = join(dir, 'staging-killed');
    mkdirSync(staging);
    const seen = new Set<number>();
    // One load left alone says how long a load takes on this machine; the kills land at ten
    // points from start-up to past its end, through the staging and the ordered runs.
    const began = Date.now();
    const whole = await run(['load', '--data', 'data-killed-whole', 'killed.ndjson'], {
      TMPDIR: staging,
    });
    expect(whole.code).toBe(0);
    const took = Date.now() - began;
    const delays = Array.from({ length: 10 }, (_, k) =>
      Math.round(150 + ((took * 1.1 - 150) * k) / 9),
    );
    for (const [n, delay] of delays.entries()) {
      const data = `data-killed-${n}`;
      const child = start(['load', '--data', data, 'killed.ndjson'], { TMPDIR: staging });
      const exited = new Promise((resolve) => child.on('exit', resolve));
      await new Promise((resolve) => setTimeout(resolve, delay));
      child.kill('SIGKILL');
      await exited;
      const count = await withEngine(join(dir, data), async (engine) => {
        const answer = await engine.query({
          api_key: 'k',
          graph_type: 'Single Value',
          start: 1_699_999_000,
          end: 1_700_100_000,
        });
        return (answer.body as { result: Array<{ Count: number }> }).result[0]?.Count ?? 0;
      });
      expect([0, events.length]).toContain(count);
      seen.add(count);
    }
    // Some kill landed before the commit (a machine slow enough to miss every one says nothing).
    expect(seen.has(0)).toBe(true);
  }, 120_000);

  test('a clustered load into a new workspace: one run per kind in time order, no free blocks in the file', async () => {
    const events = Array.from({ length: 300_000 }, (_, i) => ({
      timestamp: 1_700_000_000 + Math.floor(i / 10),
      json: { kind: ['a', 'b', 'c'][i % 3], [`x${i % 3}`]: i, payload: 'p'.repeat(i % 40) },
    }));
    writeFileSync(
      join(dir, 'blocks.ndjson'),
      `${events.map((e) => JSON.stringify(e)).join('\n')}\n`,
    );
    const loaded = await run(['load', '--data', 'data-blocks', 'blocks.ndjson']);
    expect(loaded.stdout).toMatch(/rows ordered by 'kind'/);
    const instance = await DuckDBInstance.create(join(dir, 'data-blocks', 'default.duckdb'));
    try {
      const conn = await instance.connect();
      const size = await conn.runAndReadAll(
        'SELECT free_blocks, used_blocks FROM pragma_database_size()',
      );
      const [free, used] = (size.getRows()[0] ?? []).map(Number);
      expect(used).toBeGreaterThan(0);
      expect(free).toBe(0);
      // Stored in three runs, one per kind, each in time order.
      const runs = await conn.runAndReadAll(
        `SELECT count(*) FILTER (WHERE k IS DISTINCT FROM p), count(*) FILTER (WHERE t < pt)
         FROM (SELECT json->>'kind' AS k, lag(json->>'kind') OVER w AS p, "timestamp" AS t,
                      lag("timestamp") OVER w AS pt
               FROM _engine.events_1 WINDOW w AS (ORDER BY rowid))`,
      );
      expect(runs.getRows()[0]?.map(Number)).toEqual([3, 2]);
      conn.closeSync();
    } finally {
      instance.closeSync();
    }
  }, 90_000);

  test('refuses a data directory that a running engine holds', async () => {
    writeFileSync(join(dir, 'one.ndjson'), '{"timestamp": 1, "json": {"a": 1}}\n');
    const held = join(dir, 'data-held');
    await withEngine(held, async () => {
      const result = await run(['load', '--data', 'data-held', 'one.ndjson']);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/default\.duckdb is in use by another process/);
      // serve says the same in one line, not DuckDB's lock text.
      const serve = await run(['serve', '--data', 'data-held', '--port', '0'], {
        ANALYTICS_API_KEY: 'k',
      });
      expect(serve.code).toBe(1);
      expect(serve.stderr).toMatch(
        /^analytics-engine serve: \S*default\.duckdb is in use by another process \(is an engine serving it\? stop it first\)\n$/,
      );
    });
  }, 30_000);

  test.each(['serve', 'load', 'demo-data'])(
    '%s --help prints its usage',
    async (name) => {
      const result = await run([name, '--help']);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`^usage: analytics-engine ${name} `));
      expect(result.stdout).toContain(`  ${name} `);
      expect(result.stderr).toBe('');
    },
    30_000,
  );

  test('usage mistakes exit 2', async () => {
    const [noFile, badFlag, badCommand, missing] = await Promise.all([
      run(['load']),
      run(['load', '--bogus', 'x.ndjson']),
      run(['nonsense']),
      run(['load', 'missing.ndjson']),
    ]);
    expect(noFile.code).toBe(2);
    expect(badFlag.code).toBe(2);
    expect(badCommand.code).toBe(2);
    for (const { stderr } of [noFile, badFlag, badCommand, missing]) {
      expect(stderr).toMatch(/^analytics-engine[^\n]*: [^\n]+\n$/);
    }
    expect(badFlag.stderr).toMatch(/Unknown option '--bogus' \(analytics-engine load --help\)/);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/cannot read .*missing\.ndjson/);
  }, 30_000);

  test('--rollup-keys with --clickhouse is checked as on DuckDB, before ClickHouse is reached', async () => {
    const answers = await Promise.all([
      run(['load', '--rollup-keys', 'a.b', '--clickhouse', 'http://127.0.0.1:9', 'x.ndjson']),
      run(['serve', '--rollup-sums', 'v,v', '--clickhouse', 'http://127.0.0.1:9'], {
        ANALYTICS_API_KEY: 'cli-rollups-key',
      }),
      // `auto` is no name: the declared keys beside it are checked all the same.
      run(['serve', '--rollup-keys', 'auto,a.b', '--clickhouse', 'http://127.0.0.1:9'], {
        ANALYTICS_API_KEY: 'cli-rollups-key',
      }),
    ]);
    expect(answers.map((a) => a.code)).toEqual([2, 2, 2]);
    expect(answers[0]?.stderr).toMatch(/rollup key 'a\.b' is not a top-level key/);
    expect(answers[1]?.stderr).toMatch(/rollup key 'v' is named twice/);
    expect(answers[2]?.stderr).toMatch(/rollup key 'a\.b' is not a top-level key/);
  }, 30_000);

  test('--clickhouse-key-columns takes payload keys, and goes with --clickhouse', async () => {
    const env = { ANALYTICS_API_KEY: 'cli-key-columns-key' };
    const answers = await Promise.all([
      run(['load', '--clickhouse-key-columns', 'event', 'x.ndjson']),
      run(['serve', '--clickhouse-key-columns', 'event'], env),
      run(
        ['serve', '--clickhouse', 'http://127.0.0.1:9', '--clickhouse-key-columns', 'event,,plan'],
        env,
      ),
    ]);
    expect(answers.map((a) => a.code)).toEqual([2, 2, 2]);
    expect(answers[0]?.stderr).toMatch(/--clickhouse-key-columns needs --clickhouse URL/);
    expect(answers[1]?.stderr).toMatch(/--clickhouse-key-columns needs --clickhouse URL/);
    expect(answers[2]?.stderr).toMatch(
      /--clickhouse-key-columns: expected payload keys such as event,plan,price/,
    );
  }, 30_000);

  test('--rollup-keys and --rollup-sums take top-level keys, each once', async () => {
    const answers = await Promise.all([
      run(['load', '--rollup-keys', 'event,device.os', 'x.ndjson']),
      run(['serve', '--rollup-sums', 'price,price'], { ANALYTICS_API_KEY: 'cli-rollups-key' }),
      run(['serve', '--rollups', '--rollup-reads', 'sometimes'], {
        ANALYTICS_API_KEY: 'cli-rollups-key',
      }),
    ]);
    expect(answers.map((a) => a.code)).toEqual([2, 2, 2]);
    expect(answers[0]?.stderr).toMatch(/rollup key 'device\.os' is not a top-level key/);
    expect(answers[1]?.stderr).toMatch(/rollup key 'price' is named twice/);
    expect(answers[2]?.stderr).toMatch(/--rollup-reads must be 'always' or 'cheaper'/);
  }, 30_000);

  test('a workspace name that is not a plain name is a usage mistake for every command that writes one', async () => {
    const refused = await Promise.all([
      run(['load', '--workspace', '../escape', 'x.ndjson']),
      run(['load', '--clickhouse', 'http://127.0.0.1:9', '--workspace', 'a;b', 'x.ndjson']),
      run(['export', '--workspace', '../escape', '--to-clickhouse', 'http://127.0.0.1:9']),
      run(['demo-data', '--workspace', 'a b']),
    ]);
    for (const { code, stderr } of refused) {
      expect(code).toBe(2);
      expect(stderr).toMatch(
        /^analytics-engine \S+: --workspace '[^']+' must be letters, digits, '_' or '-'/,
      );
    }
    expect(existsSync(join(dir, 'escape.duckdb'))).toBe(false);
  }, 30_000);
});

describe('demo-data', () => {
  test('writes a seeded demo workspace with the documented fields', async () => {
    const result = await run(['demo-data', '--data', 'demo', '--events', '3000']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^wrote 3,000 demo events to .*demo\/default\.duckdb/);
    const again = await run(['demo-data', '--data', 'demo', '--events', '10']);
    expect(again.stdout).toMatch(/already holds demo events/);
    await withEngine(join(dir, 'demo'), async (engine) => {
      const q = async (body: Record<string, unknown>) =>
        (await engine.query({ api_key: 'k', start: '91 days ago', end: 'now', ...body })).body as {
          result: Array<Record<string, unknown>>;
        };
      expect((await q({ graph_type: 'Single Value' })).result).toEqual([{ Count: 3000 }]);
      const tenants = (await q({ graph_type: 'Table', split: 'tenant' })).result.map(
        (r) => r.tenant,
      );
      expect(tenants.sort()).toEqual(['acme', 'globex']);
      const events = (await q({ graph_type: 'Table', split: 'event' })).result.map((r) => r.event);
      expect(events).toEqual(expect.arrayContaining(['page_view', 'signup', 'purchase']));
      const priced = await q({
        graph_type: 'Single Value',
        filters: [
          ['event', '=', 'purchase'],
          ['price', '>', 0],
        ],
      });
      const purchases = await q({
        graph_type: 'Single Value',
        filters: [['event', '=', 'purchase']],
      });
      expect(priced.result).toEqual(purchases.result);
      expect((await q({ graph_type: 'Table', split: 'device.os' })).result.length).toBeGreaterThan(
        2,
      );
      const older = await q({ graph_type: 'Single Value', start: 0, end: '90 days ago' });
      expect(older.result).toEqual([{ Count: 0 }]);
    });
  }, 60_000);
});

describe('serve', () => {
  test('prints its URL when ready, answers, and stops on SIGTERM', async () => {
    const child = start(['serve', '--port', '0', '--data', 'served'], {
      ANALYTICS_API_KEY: 'serve-key',
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (d) => {
        out += d;
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m) resolve(m[1] as string);
      });
      child.on('exit', (code) => reject(new Error(`exited ${code}`)));
    });
    const health = await fetch(`${url}/health`);
    expect(await health.json()).toEqual({ ok: true });
    const log = await fetch(`${url}/api/log`, {
      method: 'POST',
      body: JSON.stringify({ api_key: 'serve-key', json: { a: 1 } }),
    });
    expect(await log.json()).toEqual({ ok: true, count: 1 });
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    );
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 30_000);

  test('stops with one line naming the ClickHouse it cannot reach once --clickhouse-wait is over', async () => {
    const env = { ANALYTICS_API_KEY: 'cli-wait-key' };
    const [unreachable, notANumber, noClickHouse] = await Promise.all([
      run(
        ['serve', '--port', '0', '--clickhouse', 'http://127.0.0.1:9', '--clickhouse-wait', '0'],
        env,
      ),
      run(['serve', '--clickhouse', 'http://127.0.0.1:9', '--clickhouse-wait', 'soon'], env),
      run(['load', '--clickhouse-wait', '5', 'x.ndjson']),
    ]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toBe(
      'analytics-engine serve: ClickHouse at http://127.0.0.1:9/ could not be reached: connection refused\n',
    );
    expect(notANumber.code).toBe(2);
    expect(notANumber.stderr).toMatch(/--clickhouse-wait expects a whole number, got 'soon'/);
    expect(noClickHouse.code).toBe(2);
    expect(noClickHouse.stderr).toMatch(/--clickhouse-wait needs --clickhouse URL/);
  }, 30_000);

  test('refuses to start without a key', async () => {
    const result = await run(['serve', '--port', '0'], { ANALYTICS_API_KEY: '' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/set ANALYTICS_API_KEY/);
  });

  test('--workspaces FILE serves several workspaces', async () => {
    writeFileSync(join(dir, 'workspaces.json'), JSON.stringify({ alpha: 'ka', beta: 'kb' }));
    const child = start([
      'serve',
      '--port',
      '0',
      '--data',
      'multi',
      '--workspaces',
      'workspaces.json',
    ]);
    const url = await new Promise<string>((resolve) => {
      child.stdout?.on('data', (d) => {
        const m = /listening on (http:\/\/[^ ]+)/.exec(String(d));
        if (m) resolve(m[1] as string);
      });
    });
    for (const key of ['ka', 'kb']) {
      const r = await fetch(`${url}/api/collections`, {
        method: 'POST',
        body: JSON.stringify({ api_key: key }),
      });
      expect(r.status).toBe(200);
    }
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }, 30_000);
});
