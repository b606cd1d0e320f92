import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { INVALID_API_KEY } from '@analytics-chart/protocol';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { generateDemoData } from '../src/index.ts';
import { API_KEY, startServer, type TestServer } from './helpers/engine-server.ts';

/** The error rules of docs/query-semantics.md, over real HTTP. Every failure is one JSON sentence. */

let server: TestServer;
const NOW = 1_700_000_000;

beforeAll(async () => {
  server = await startServer({ now: () => NOW, maxBodyBytes: 64 * 1024 });
  const logged = await server.post('/api/log', {
    api_key: API_KEY,
    json: { event: 'x' },
    timestamp: NOW - 60,
  });
  expect(logged.status).toBe(200);
});

afterAll(async () => {
  await server?.close();
});

const VALID = { graph_type: 'Single Value', start: '1 day ago', end: 'now' };

function expectOneSentence(body: unknown) {
  expect(Object.keys(body as object)).toEqual(['error']);
  const error = (body as { error: string }).error;
  expect(typeof error).toBe('string');
  expect(error.length).toBeGreaterThan(5);
  // No stack, SQL or key in any answer.
  expect(error).not.toMatch(/\n|\bat .*\(|SELECT|FROM |duckdb|_engine|test-key/i);
}

describe('bad input is a 400 with one clear sentence', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['wrong type for filters', { ...VALID, filters: 'event = x' }, /^filters: expected a list/],
    [
      'wrong type for a condition',
      { ...VALID, filters: [['event', '=']] },
      /^filters\[0\]: expected a condition/,
    ],
    [
      'unknown operator',
      { ...VALID, filters: [['event', '~', 'x']] },
      /^filters\[0\]\[1\]: unknown operator/,
    ],
    [
      'wrong type for granularity',
      { ...VALID, granularity: 5 },
      /^granularity: expected granularity/,
    ],
    [
      'unknown granularity',
      { ...VALID, graph_type: 'Single Line', granularity: 'Fortnight' },
      /^granularity: unknown granularity 'Fortnight'/,
    ],
    [
      'wrong type for hideMissing',
      { ...VALID, customizations: { hideMissing: 'yes' } },
      /^customizations.hideMissing: expected true or false/,
    ],
    [
      'unknown graph type',
      { ...VALID, graph_type: 'Heatmap' },
      /^graph_type: unknown graph type 'Heatmap'/,
    ],
    ['missing graph type', { start: '1 day ago', end: 'now' }, /^graph_type is required/],
    [
      'unknown aggregation',
      { ...VALID, aggregation: 'Mode' },
      /^aggregation: unknown aggregation 'Mode'/,
    ],
    ['aggregation without metric', { ...VALID, aggregation: 'Sum' }, /^metric: Sum needs a metric/],
    [
      'split graph without split',
      { ...VALID, graph_type: 'Table' },
      /^split: Table needs a split field/,
    ],
    [
      'Ratio without populations',
      { ...VALID, graph_type: 'Ratio Line' },
      /^numerator_filters: Ratio Line needs/,
    ],
    [
      'unparseable start',
      { ...VALID, start: 'yesterdayy' },
      /^start: could not parse 'yesterdayy' as a time/,
    ],
    ['unparseable end', { ...VALID, end: '13/45/2024' }, /^end: could not parse/],
    ['missing start', { graph_type: 'Single Value', end: 'now' }, /^start is required/],
    [
      'start after end',
      { ...VALID, start: 'now', end: '1 day ago' },
      /^start: must be earlier than end/,
    ],
    [
      'unknown zone',
      { ...VALID, IANA_time_zone: 'Mars/Olympus_Mons' },
      /^IANA_time_zone: unknown time zone/,
    ],
    ['unparseable compare', { ...VALID, compare: 'last tuesday' }, /^compare: could not parse/],
    [
      'too many buckets',
      { ...VALID, graph_type: 'Single Line', granularity: 'Minute', start: '1 year ago' },
      /^granularity: Minute would give \d+ buckets/,
    ],
    ['body is not an object', 'not an object at all', /^Invalid API KEY$/],
  ];
  for (const [name, body, message] of cases) {
    test(name, async () => {
      const answer = await server.post(
        '/api/visualize/data',
        typeof body === 'string' ? JSON.stringify(body) : { api_key: API_KEY, ...(body as object) },
      );
      expect(answer.status).toBe(400);
      expectOneSentence(answer.body);
      expect(answer.body.error).toMatch(message);
    });
  }
  test('malformed JSON', async () => {
    for (const text of ['{"api_key": "x", ', '', 'graph_type=Table', '{"a":1}{"b":2}']) {
      const answer = await server.post('/api/visualize/data', text);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ error: 'request body: is not valid JSON' });
    }
  });
});

describe('the key travels only in the body', () => {
  const invalid = { error: INVALID_API_KEY };
  test('missing, empty, wrong, or with stray whitespace', async () => {
    for (const api_key of [
      undefined,
      '',
      'nope',
      ` ${API_KEY}`,
      `${API_KEY}\n`,
      42,
      null,
      [API_KEY],
    ]) {
      const answer = await server.post('/api/visualize/data', { ...VALID, api_key });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual(invalid);
    }
  });
  test('header, query string and cookie are not looked at', async () => {
    const headers: Array<Record<string, string>> = [
      { Authorization: `Bearer ${API_KEY}` },
      { 'X-Api-Key': API_KEY },
      { api_key: API_KEY },
      { Cookie: `api_key=${API_KEY}` },
    ];
    for (const h of headers) {
      const answer = await server.post('/api/visualize/data', VALID, { headers: h });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual(invalid);
    }
    const url = `${server.url}/api/visualize/data?api_key=${API_KEY}`;
    const response = await fetch(url, { method: 'POST', body: JSON.stringify(VALID) });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(invalid);
  });
  test('every endpoint checks the key', async () => {
    for (const path of ['/api/log', '/api/bulk-log', '/api/collections']) {
      const answer = await server.post(path, { api_key: 'wrong', json: {}, jsons: [] });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual(invalid);
    }
  });
  test("a key opens only its own workspace's data", async () => {
    const answer = await server.post('/api/visualize/data', {
      ...VALID,
      api_key: 'other-key-9876543210',
    });
    expect(answer.status).toBe(200);
    expect(answer.body.result).toEqual([{ Count: 0 }]);
    const mine = await server.post('/api/visualize/data', { ...VALID, api_key: API_KEY });
    expect(mine.body.result).toEqual([{ Count: 1 }]);
  });
  test('a wrong key wins over other mistakes', async () => {
    const answer = await server.post('/api/visualize/data', {
      api_key: 'nope',
      graph_type: 'Heatmap',
    });
    expect(answer.body).toEqual(invalid);
  });
});

describe('HTTP', () => {
  test('a body over the limit is 413', async () => {
    const big = { api_key: API_KEY, jsons: [JSON.stringify({ pad: 'x'.repeat(70 * 1024) })] };
    const answer = await server.post('/api/bulk-log', big);
    expect(answer.status).toBe(413);
    expectOneSentence(answer.body);
  });
  test('the limit counts bytes exactly, declared or streamed in chunks', async () => {
    const LIMIT = 64 * 1024;
    // A JSON body of exactly `bytes` bytes (ASCII), valid for /api/collections.
    const bodyOf = (bytes: number) => {
      const head = JSON.stringify({ api_key: API_KEY, pad: '' });
      return JSON.stringify({ api_key: API_KEY, pad: 'x'.repeat(bytes - head.length) });
    };
    expect(Buffer.byteLength(bodyOf(LIMIT))).toBe(LIMIT);
    const send = (body: string, chunked: boolean) =>
      new Promise<{ status: number; body: string; cors: string | undefined }>((resolve, reject) => {
        const { hostname, port } = new URL(server.url);
        const req = request(
          {
            host: hostname,
            port,
            path: '/api/collections',
            method: 'POST',
            headers: chunked ? {} : { 'Content-Length': Buffer.byteLength(body) },
          },
          (res) =>
            text(res).then(
              (answer) =>
                resolve({
                  status: res.statusCode ?? 0,
                  body: answer,
                  cors: res.headers['access-control-allow-origin'] as string | undefined,
                }),
              reject,
            ),
        );
        req.on('error', reject);
        // Without a Content-Length, Node sends the body with chunked transfer encoding.
        for (let i = 0; i < body.length; i += 10_000) req.write(body.slice(i, i + 10_000));
        req.end();
      });
    for (const chunked of [false, true]) {
      const atLimit = await send(bodyOf(LIMIT), chunked);
      expect([chunked, atLimit.status]).toEqual([chunked, 200]);
      expect(JSON.parse(atLimit.body)).toHaveProperty('list');
      const over = await send(bodyOf(LIMIT + 1), chunked);
      expect([chunked, over.status, over.cors]).toEqual([chunked, 413, '*']);
      expect(JSON.parse(over.body)).toEqual({
        error: `request body is larger than ${LIMIT} bytes`,
      });
    }
  });
  test('every answer carries the open CORS header, failures too', async () => {
    const answers = await Promise.all([
      fetch(`${server.url}/api/visualize/data`, { method: 'POST', body: '{nope' }),
      fetch(`${server.url}/api/nope`, { method: 'POST', body: '{}' }),
      fetch(`${server.url}/api/visualize/data`, {
        method: 'POST',
        body: JSON.stringify({ api_key: 'wrong' }),
      }),
      fetch(`${server.url}/health`),
    ]);
    expect(answers.map((a) => a.status)).toEqual([400, 404, 400, 200]);
    expect(answers.map((a) => a.headers.get('access-control-allow-origin'))).toEqual([
      '*',
      '*',
      '*',
      '*',
    ]);
  });
  test('unknown routes are JSON 404s', async () => {
    const answer = await server.post('/api/nope', {});
    expect(answer.status).toBe(404);
    expectOneSentence(answer.body);
  });
  test('a method a route does not answer is a JSON 405 that says which ones it does', async () => {
    for (const [method, path, allow] of [
      ['GET', '/api/visualize/data', 'POST, OPTIONS'],
      ['PUT', '/api/log', 'POST, OPTIONS'],
      ['DELETE', '/api/bulk-log', 'POST, OPTIONS'],
      ['GET', '/api/collections', 'POST, OPTIONS'],
      ['POST', '/health', 'GET, HEAD'],
    ] as const) {
      const answer = await fetch(`${server.url}${path}`, { method });
      expect(answer.status, `${method} ${path}`).toBe(405);
      expect(answer.headers.get('allow'), `${method} ${path}`).toBe(allow);
      expect(answer.headers.get('access-control-allow-origin')).toBe('*');
      expect(await answer.json()).toEqual({ error: `${path} answers ${allow} only` });
    }
  });
  test('CORS is open, as the service has it', async () => {
    const preflight = await fetch(`${server.url}/api/visualize/data`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://example.org',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain(
      'content-type',
    );
    const answer = await fetch(`${server.url}/api/visualize/data`, {
      method: 'POST',
      headers: { Origin: 'https://example.org' },
      body: JSON.stringify({ api_key: API_KEY, ...VALID }),
    });
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
  });
  test('health', async () => {
    const response = await fetch(`${server.url}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });
});

describe('time limit', () => {
  test('a collection query over its time limit is interrupted: 504, one sentence', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'engine-timeout-'));
    try {
      await generateDemoData({ dataDir, events: 50_000, now: NOW });
      const slow = await startServer({ dataDir, now: () => NOW, queryTimeoutMs: 0 });
      try {
        const answer = await slow.post('/api/visualize/data', {
          api_key: API_KEY,
          graph_type: 'Cumulative Line',
          aggregation: 'P99',
          metric: 'session_ms',
          granularity: 'Hour',
          start: '90 days ago',
          end: 'now',
        });
        expect(answer.status).toBe(504);
        expect(answer.body).toEqual({ error: 'Query timed out' });
      } finally {
        await slow.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
