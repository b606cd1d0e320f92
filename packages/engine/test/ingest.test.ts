import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MAX_NESTING } from '../src/ingest/payload-checks.ts';
import { API_KEY, startServer, type TestServer } from './helpers/engine-server.ts';

/** The ingest endpoints in the hosted service's shapes, and what a 2xx promises. */

let server: TestServer;
const NOW = 1_700_000_000.75;

beforeAll(async () => {
  server = await startServer({ now: () => NOW });
});

afterAll(async () => {
  await server?.close();
});

async function samples(collection: string, extra: Record<string, unknown> = {}) {
  const answer = await server.post('/api/visualize/data', {
    api_key: API_KEY,
    collection,
    graph_type: 'Samples',
    start: 0,
    end: NOW + 10,
    order: 'Ascending',
    ...extra,
  });
  expect(answer.status).toBe(200);
  return answer;
}

/** The Single Value count of a collection's events that pass `filters`. */
async function countWhere(collection: string, filters: unknown[]): Promise<number> {
  const answer = await server.post('/api/visualize/data', {
    api_key: API_KEY,
    collection,
    graph_type: 'Single Value',
    start: 0,
    end: 'now',
    filters,
  });
  expect(answer.status).toBe(200);
  return answer.body.result[0].Count;
}

describe('/api/log', () => {
  test('json as an object or as a string, with or without a timestamp', async () => {
    const c = 'log_shapes';
    const sent = [
      { json: { event: 'object', n: 1 }, timestamp: 1_600_000_000 },
      { json: '{"event":"string",  "n": 2}', timestamp: 1_600_000_001 },
      { json: { event: 'float ts' }, timestamp: 1_600_000_002.9 },
      { json: { event: 'digit string ts' }, timestamp: '1600000003' },
      { json: { event: 'no ts' } },
      { json: { event: 'extra keys' }, timestamp: 1_600_000_004, unknown: 'ignored' },
    ];
    for (const body of sent) {
      const answer = await server.post('/api/log', { api_key: API_KEY, collection: c, ...body });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ ok: true, count: 1 });
    }
    const { body, text } = await samples(c);
    expect(body.result).toEqual([
      { timestamp: 1_600_000_000, json: { event: 'object', n: 1 } },
      { timestamp: 1_600_000_001, json: { event: 'string', n: 2 } },
      { timestamp: 1_600_000_002, json: { event: 'float ts' } },
      { timestamp: 1_600_000_003, json: { event: 'digit string ts' } },
      { timestamp: 1_600_000_004, json: { event: 'extra keys' } },
      { timestamp: Math.floor(NOW), json: { event: 'no ts' } },
    ]);
    // A string payload comes back byte-for-byte.
    expect(text).toContain('"json":{"event":"string",  "n": 2}');
  });

  test('the default collection is all_events', async () => {
    await server.post('/api/log', { api_key: API_KEY, json: { default: true }, timestamp: 5 });
    const { body } = await samples('all_events');
    expect(body.result).toContainEqual({ timestamp: 5, json: { default: true } });
  });

  test('payloads keep their text: big integers, escapes; numbers a double holds in their one form', async () => {
    const payload =
      '{"big": 12345678901234567890, "price": 1.50, "e": 1E3, "s": "\\u00e9\\/x", "nested": {"a": [1, 2.0]}}';
    await server.post('/api/log', {
      api_key: API_KEY,
      collection: 'exact',
      json: payload,
      timestamp: 7,
    });
    const { text } = await samples('exact');
    const stored =
      '{"big": 12345678901234567890, "price": 1.5, "e": 1000, "s": "\\u00e9\\/x", "nested": {"a": [1, 2]}}';
    expect(text).toBe(`{"result":[{"timestamp":7,"json":${stored}}],"metadata":{}}`);
  });

  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['invalid JSON text', { json: '{"a":' }, 'json: is not valid JSON'],
    ['a JSON array', { json: '[1,2]' }, 'json: expected a JSON object, or a string holding one'],
    ['a number', { json: 5 }, 'json: expected a JSON object, or a string holding one'],
    ['null', { json: null }, 'json: expected a JSON object, or a string holding one'],
    ['no json', {}, 'json is required'],
    [
      'a word as timestamp',
      { json: {}, timestamp: 'yesterday' },
      'timestamp: expected Unix seconds (a number from 0 to 253402300799)',
    ],
    [
      'milliseconds',
      { json: {}, timestamp: 1_700_000_000_000 },
      'timestamp: expected Unix seconds (a number from 0 to 253402300799)',
    ],
    [
      'negative timestamp',
      { json: {}, timestamp: -1 },
      'timestamp: expected Unix seconds (a number from 0 to 253402300799)',
    ],
    [
      'empty collection',
      { json: {}, collection: ' ' },
      'collection: expected a non-empty collection name',
    ],
    [
      'half a surrogate pair',
      { json: '{"a": "\\ud800"}' },
      'json: contains half a UTF-16 surrogate pair, which is not valid Unicode',
    ],
  ];
  for (const [name, body, error] of bad) {
    test(`400 for ${name}`, async () => {
      const answer = await server.post('/api/log', {
        api_key: API_KEY,
        collection: 'rejects',
        ...body,
      });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ error });
    });
  }
  test('400, not a crash, for payloads nested too deep, sent as objects or as text', async () => {
    const objectText = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const error = `json: nested deeper than ${MAX_NESTING} levels`;
    // The reliability tests' repro: 20,000 levels as an object inside the body.
    for (const depth of [MAX_NESTING + 1, 20_000]) {
      const asObject = await server.post(
        '/api/log',
        `{"api_key":"${API_KEY}","collection":"rejects","json":${objectText(depth)}}`,
      );
      expect(asObject.status).toBe(400);
      expect(asObject.body).toEqual({ error });
      const asText = await server.post('/api/log', {
        api_key: API_KEY,
        collection: 'rejects',
        json: `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`,
      });
      expect(asText.status).toBe(400);
      expect(asText.body).toEqual({ error });
    }
    const bulk = await server.post(
      '/api/bulk-log',
      `{"api_key":"${API_KEY}","collection":"rejects","jsons":["{}",${objectText(20_000)}]}`,
    );
    expect(bulk.status).toBe(400);
    expect(bulk.body).toEqual({ error: `jsons[1]: nested deeper than ${MAX_NESTING} levels` });
    // Brackets inside strings are not nesting.
    const brackets = await server.post('/api/log', {
      api_key: API_KEY,
      collection: 'deep_ok',
      json: { text: '{['.repeat(MAX_NESTING * 2) },
      timestamp: 1,
    });
    expect(brackets.status).toBe(200);
  });

  test(`${MAX_NESTING} levels are fine, and kept byte for byte`, async () => {
    const text = `${'{"a":'.repeat(MAX_NESTING)}1${'}'.repeat(MAX_NESTING)}`;
    const answer = await server.post('/api/log', {
      api_key: API_KEY,
      collection: 'deep_ok',
      json: text,
      timestamp: 2,
    });
    expect(answer.status).toBe(200);
    const { text: body } = await samples('deep_ok');
    expect(body).toContain(`{"timestamp":2,"json":${text}}`);
  });

  test('nothing was written by the rejected requests', async () => {
    const { body } = await samples('rejects');
    expect(body.result).toEqual([]);
  });
});

describe('/api/bulk-log', () => {
  test('writes every event with the shared timestamp', async () => {
    const jsons = ['{"i":1}', '{"i":2}', { i: 3 }];
    const answer = await server.post('/api/bulk-log', {
      api_key: API_KEY,
      collection: 'bulk',
      timestamp: 100,
      jsons,
    });
    expect(answer.body).toEqual({ ok: true, count: 3 });
    const { body } = await samples('bulk');
    expect(body.result).toEqual([1, 2, 3].map((i) => ({ timestamp: 100, json: { i } })));
  });
  test('10,000 events in one request, in one second: all of them, in the order sent', async () => {
    // About a megabyte of payload text, which travels to DuckDB in many pieces.
    const jsons = Array.from({ length: 10_000 }, (_, i) =>
      JSON.stringify({ i, text: 'é'.repeat(i % 97), n: i % 13 }),
    );
    const answer = await server.post('/api/bulk-log', {
      api_key: API_KEY,
      collection: 'one_second',
      timestamp: 4242,
      jsons,
    });
    expect(answer.body).toEqual({ ok: true, count: 10_000 });
    // Samples answer a second of more than 50 events whole, in ingest order.
    const rows = (await samples('one_second')).body.result as Array<{ json: unknown }>;
    expect(rows.map((r) => JSON.stringify(r.json))).toEqual(jsons);
  });

  test('one bad event rejects the whole request, naming it', async () => {
    const answer = await server.post('/api/bulk-log', {
      api_key: API_KEY,
      collection: 'bulk_bad',
      jsons: ['{"ok":1}', '{oops}'],
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: 'jsons[1]: is not valid JSON' });
    const { body } = await samples('bulk_bad');
    expect(body.result).toEqual([]);
  });
  test('texts in compact form are refused as the others are: half a surrogate pair, too deep', async () => {
    const refusals = [
      [
        '{"ok":1}',
        '{"a":"x\ud800"}',
        'jsons[1]: contains half a UTF-16 surrogate pair, which is not valid Unicode',
      ],
      [
        `${'{"a":'.repeat(MAX_NESTING)}1${'}'.repeat(MAX_NESTING)}`,
        '{"b":"\udc00"}',
        'jsons[1]: contains half a UTF-16 surrogate pair, which is not valid Unicode',
      ],
      [
        '{"ok":2}',
        `${'{"a":'.repeat(MAX_NESTING + 1)}1${'}'.repeat(MAX_NESTING + 1)}`,
        `jsons[1]: nested deeper than ${MAX_NESTING} levels`,
      ],
    ];
    for (const [good, bad, error] of refusals) {
      const answer = await server.post('/api/bulk-log', {
        api_key: API_KEY,
        collection: 'bulk_bad',
        jsons: [good, bad],
      });
      expect(answer.body).toEqual({ error });
      expect(answer.status).toBe(400);
    }
    expect((await samples('bulk_bad')).body.result).toEqual([]);
  });
  test('jsons must be a list; an empty one writes nothing', async () => {
    const notList = await server.post('/api/bulk-log', { api_key: API_KEY, jsons: '{"a":1}' });
    expect(notList.status).toBe(400);
    expect(notList.body.error).toMatch(/^jsons: expected a list/);
    const empty = await server.post('/api/bulk-log', {
      api_key: API_KEY,
      collection: 'bulk_empty',
      jsons: [],
    });
    expect(empty.body).toEqual({ ok: true, count: 0 });
  });
  test('at most 10,000 events per request', async () => {
    const answer = await server.post('/api/bulk-log', {
      api_key: API_KEY,
      jsons: Array(10_001).fill('{}'),
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('jsons: at most 10000 events per request');
  });
});

describe('/api/collections', () => {
  test('lists every collection that has events, by name', async () => {
    const answer = await server.post('/api/collections', { api_key: API_KEY });
    expect(answer.status).toBe(200);
    const names = answer.body.list.map((c: { name: string }) => c.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['all_events', 'bulk', 'exact', 'log_shapes']));
    expect(names).not.toContain('rejects');
    expect(names).not.toContain('bulk_empty');
    expect(answer.body.list[0]).toEqual({ name: names[0] });
    const other = await server.post('/api/collections', { api_key: 'other-key-9876543210' });
    expect(other.body).toEqual({ list: [] });
  });
});

describe('typed columns follow the data', () => {
  test('a key that holds numbers, then strings, then arrays keeps answering right', async () => {
    const c = 'evolving';
    const values = [1, 2, '3', 'abc', ['x', 3], true];
    for (const [i, v] of values.entries()) {
      await server.post('/api/log', {
        api_key: API_KEY,
        collection: c,
        json: { v, i },
        timestamp: 1000 + i,
      });
    }
    const table = await server.post('/api/visualize/data', {
      api_key: API_KEY,
      collection: c,
      graph_type: 'Table',
      split: 'v',
      start: 0,
      end: 'now',
    });
    expect(table.body.result.map((r: { v: string }) => r.v).sort()).toEqual([
      '1',
      '2',
      '3',
      '["x",3]',
      'abc',
      'true',
    ]);
    const count = (filters: unknown[]) => countWhere(c, filters);
    expect(await count([['v', '=', 3]])).toBe(1);
    expect(await count([['v', '>', 1.5]])).toBe(2);
    expect(await count([['v', 'includes', 'x']])).toBe(1);
    expect(await count([['v', 'includes', '3']])).toBe(2);
    expect(await count([['v', '=', true]])).toBe(1);
    expect(await count([['v', '≠', 'abc']])).toBe(5);
  });
});

describe('group commit', () => {
  test('requests sharing a transaction bring their own keys and kinds', async () => {
    const c = 'group_keys';
    // Sent at once, in-process: all but the first queue behind it and share one transaction.
    const answers = await Promise.all([
      server.engine.bulkLog({ api_key: API_KEY, collection: c, timestamp: 10, jsons: [{ a: 1 }] }),
      server.engine.bulkLog({
        api_key: API_KEY,
        collection: c,
        timestamp: 11,
        jsons: ['{"a":"x","b":[1,"y"]}'],
      }),
      server.engine.log({
        api_key: API_KEY,
        collection: c,
        timestamp: 12,
        json: { a: 2.5, d: { e: true } },
      }),
      server.engine.bulkLog({
        api_key: API_KEY,
        collection: c,
        timestamp: 13,
        jsons: [{ b: 'z' }, { a: '4' }],
      }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    const table = async (split: string) =>
      (
        await server.post('/api/visualize/data', {
          api_key: API_KEY,
          collection: c,
          graph_type: 'Table',
          split,
          start: 0,
          end: 'now',
        })
      ).body.result;
    expect(await table('a')).toEqual([
      { a: '1', Count: 1 },
      { a: '2.5', Count: 1 },
      { a: '4', Count: 1 },
      { a: 'x', Count: 1 },
    ]);
    expect(await table('b')).toEqual([
      { b: '[1,"y"]', Count: 1 },
      { b: 'z', Count: 1 },
    ]);
    expect(await table('d.e')).toEqual([{ 'd.e': 'true', Count: 1 }]);
    const count = (filters: unknown[]) => countWhere(c, filters);
    expect(await count([['a', '>', 2]])).toBe(2);
    expect(await count([['b', 'includes', 'y']])).toBe(1);
  });
});

describe('appends beside schema changes', () => {
  test('concurrent requests, some bringing new keys: every event, every typed value', async () => {
    const c = 'side_by_side';
    // The collection exists first, so most requests only append; every seventh brings a key
    // of its own, which needs a schema change while other requests are appending.
    await server.engine.bulkLog({
      api_key: API_KEY,
      collection: c,
      timestamp: 1,
      jsons: [{ n: 0 }],
    });
    const requests = Array.from({ length: 60 }, (_, r) => ({
      api_key: API_KEY,
      collection: c,
      timestamp: 100 + r,
      jsons: Array.from({ length: 50 }, (_, i) => ({
        n: r * 50 + i + 1,
        ...(r % 7 === 3 ? { [`new${r}`]: `v${i % 2}` } : {}),
      })),
    }));
    const answers = await Promise.all(requests.map((body) => server.engine.bulkLog(body)));
    expect(answers.map((a) => a.status)).toEqual(requests.map(() => 200));
    expect(await countWhere(c, [])).toBe(1 + 60 * 50);
    expect(await countWhere(c, [['n', '>', 1500]])).toBe(1500);
    for (const r of [3, 10, 17, 24, 31, 38, 45, 52, 59]) {
      const split = await server.post('/api/visualize/data', {
        api_key: API_KEY,
        collection: c,
        graph_type: 'Table',
        split: `new${r}`,
        start: 0,
        end: 'now',
      });
      expect(split.body.result).toEqual([
        { [`new${r}`]: 'v0', Count: 25 },
        { [`new${r}`]: 'v1', Count: 25 },
      ]);
    }
  });
});

describe('a request that cannot be written', () => {
  test.each([
    ['', {}],
    // The insert then runs while JavaScript adds the rollup rows up: its failure must surface.
    [', with rollups', { rollups: { default: { keys: ['n'], sums: ['i'] } } }],
  ])(
    'fails alone: the others that shared its transaction are written%s',
    async (_, rollups) => {
      const DAY10 = 10 * 86_400;
      const dataDir = mkdtempSync(join(tmpdir(), 'engine-oom-'));
      const small = await startServer({ dataDir, memoryLimit: '16MB', now: () => NOW, ...rollups });
      try {
        const big = Array.from({ length: 5000 }, (_, i) =>
          JSON.stringify({ i, pad: 'x'.repeat(8000) }),
        );
        // The first request commits alone; the next two queue behind it and share a transaction.
        const [first, huge, last] = await Promise.all([
          small.engine.bulkLog({ api_key: API_KEY, jsons: ['{"n":1}'], timestamp: DAY10 + 5 }),
          small.engine.bulkLog({ api_key: API_KEY, jsons: big, timestamp: DAY10 + 6 }),
          small.engine.bulkLog({ api_key: API_KEY, jsons: ['{"n":2}'], timestamp: DAY10 + 7 }),
        ]);
        expect([first.status, huge.status, last.status]).toEqual([200, 413, 200]);
        expect(huge.body).toEqual({
          error: "the events need more memory than the engine's limit; send fewer at a time",
        });
        const table = await small.engine.query({
          api_key: API_KEY,
          graph_type: 'Table',
          split: 'n',
          start: 0,
          end: 'now',
        });
        expect(table.body).toEqual({
          result: [
            { n: '1', Count: 1 },
            { n: '2', Count: 1 },
          ],
          metadata: {},
        });
        // Five weeks of whole days, which rollups answer when kept: the two events, nothing else.
        const days = await small.engine.query({
          api_key: API_KEY,
          graph_type: 'Single Line',
          granularity: 'Day',
          start: 7 * 86_400,
          end: 42 * 86_400,
          IANA_time_zone: 'UTC',
        });
        expect(days.status).toBe(200);
        const values = (days.body as { result: Array<{ Count: number }> }).result.map(
          (r) => r.Count,
        );
        expect(values.filter((v) => v !== 0)).toEqual([2]);
      } finally {
        await small.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    60_000,
  );
});

describe('durability', () => {
  test('concurrent requests share commits, and nothing acknowledged is lost', async () => {
    const c = 'concurrent';
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        server.post('/api/log', {
          api_key: API_KEY,
          collection: c,
          json: { i },
          timestamp: 2000 + (i % 7),
        }),
      ),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const ids = new Set<number>();
    let start = 0;
    for (;;) {
      const page = (await samples(c, { start })).body.result as Array<{
        timestamp: number;
        json: { i: number };
      }>;
      if (page.length === 0) break;
      for (const row of page) ids.add(row.json.i);
      start = page[page.length - 1]?.timestamp ?? start;
    }
    expect(ids.size).toBe(200);
  });

  test('acknowledged events survive a SIGKILL of the serving process', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'engine-durable-'));
    // One process (tsx as a loader, not its CLI, which would run the script in a grandchild).
    const loader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    const child = spawn(
      process.execPath,
      ['--import', loader, join(import.meta.dirname, 'helpers/serve-child.ts'), dataDir],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
        child.once('exit', (code) => reject(new Error(`child exited with ${code}`)));
      });
      const acknowledged: number[] = [];
      let killed = false;
      const send = async (i: number) => {
        try {
          const body =
            i % 10 === 0
              ? {
                  api_key: API_KEY,
                  timestamp: 3000 + i,
                  jsons: [JSON.stringify({ i }), JSON.stringify({ i: -i - 1 })],
                }
              : { api_key: API_KEY, timestamp: 3000 + i, json: { i } };
          const response = await fetch(`${url}/api/${i % 10 === 0 ? 'bulk-log' : 'log'}`, {
            method: 'POST',
            body: JSON.stringify(body),
          });
          if (response.status === 200 && !killed) {
            acknowledged.push(i);
            if (i % 10 === 0) acknowledged.push(-i - 1);
          }
        } catch {
          // In flight when the process died: not acknowledged, no promise made.
        }
        if (acknowledged.length >= 150 && !killed) {
          killed = true;
          child.kill('SIGKILL');
        }
      };
      await Promise.all(Array.from({ length: 400 }, (_, i) => send(i)));
      expect(killed).toBe(true);
      await new Promise((resolve) =>
        child.exitCode !== null || child.signalCode ? resolve(null) : child.once('exit', resolve),
      );

      const restarted = await startServer({ dataDir, now: () => NOW });
      try {
        const table = await restarted.post('/api/visualize/data', {
          api_key: API_KEY,
          graph_type: 'Table',
          split: 'i',
          start: 0,
          end: 'now',
        });
        const stored = new Set(table.body.result.map((r: { i: string }) => Number(r.i)));
        for (const i of acknowledged) expect(stored.has(i)).toBe(true);
        expect(acknowledged.length).toBeGreaterThanOrEqual(150);
      } finally {
        await restarted.close();
      }
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
