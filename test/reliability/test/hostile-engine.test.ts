/**
 * Item 4 (engine): property-based fuzzing of the engine process's four POST endpoints over raw
 * sockets: mutated valid bodies, arbitrary values with prototype keys and duplicate keys, giant
 * number literals, huge strings, raw bytes that are not UTF-8, deep nesting, oversized bodies.
 * Every refusal must be a 4xx JSON `{error}` free of server internals; a 2xx only where the
 * documented contract accepts the input; and the process must still answer `/health`.
 */
import { envelopeSchema, queryRequestSchema } from '@analytics-chart/protocol';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bulkLogAccepts, collectionsAccepts, logAccepts, readBody } from '../src/engine-oracle.ts';
import { reportFigures } from '../src/figures.ts';
import { FuzzLedger, LEDGER_HEADER } from '../src/fuzz-ledger.ts';
import {
  deeplyNested,
  type Hostile,
  hostileBytes,
  hostileValue,
  mutatedBody,
  toJsonText,
} from '../src/hostile-values.ts';
import { ENGINE_KNOWN_FINDINGS } from '../src/known-findings.ts';
import { budget } from '../src/profile.ts';
import type { RawRequest, RawResponse } from '../src/raw-http.ts';
import { rawRequest } from '../src/raw-http.ts';
import { type EngineUnderTest, startSeededEngine } from '../src/system-under-test.ts';

let engine: EngineUnderTest;
let key = '';

/** Filled with the key once the engine runs: every answer is searched for it. */
const secrets: string[] = [];
const ledger = new FuzzLedger(
  () => engine.url,
  { withCode: false, secrets },
  ENGINE_KNOWN_FINDINGS,
);

beforeAll(async () => {
  engine = await startSeededEngine(300);
  key = engine.apiKey;
  secrets.push(key);
});

afterAll(async () => {
  reportFigures(
    'hostile-engine',
    `Hostile input: engine process (${budget().fuzzRuns} runs per property; total ${ledger.total()} cases)`,
    LEDGER_HEADER,
    ledger.rows(),
    { findings: Object.fromEntries(ledger.findings) },
  );
  await engine?.close();
});

const post = (
  path: string,
  body: Buffer | string,
  contentType = 'application/json',
): RawRequest => ({
  method: 'POST',
  path,
  headers: [['Content-Type', contentType]],
  body,
});

const json = (text: string) => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

/** The contract's verdict on a body for each endpoint, as a check of the engine's answer. */
function expectation(path: string, bytes: Buffer) {
  return (answer: RawResponse): string[] => {
    const ok = answer.status >= 200 && answer.status < 300;
    const read = readBody(bytes);
    if (!read.ok) return ok ? ['2xx for a body that is not JSON'] : [];
    const body = read.value;
    if (path === '/api/visualize/data') {
      if (!ok) return [];
      const problems: string[] = [];
      if (!queryRequestSchema.safeParse(body).success)
        problems.push('2xx for a query the protocol refuses');
      if (!envelopeSchema.safeParse(json(answer.text)).success)
        problems.push('2xx without an envelope');
      return problems;
    }
    if (path === '/api/collections') {
      const accepts = collectionsAccepts(body, key);
      if (accepts !== ok)
        return [`${answer.status} but the contract says ${accepts ? 'accept' : 'refuse'}`];
      if (ok && !Array.isArray((json(answer.text) as { list?: unknown })?.list))
        return ['2xx without list'];
      return [];
    }
    const count = path === '/api/log' ? logAccepts(body, key) : bulkLogAccepts(body, key);
    if ((count !== null) !== ok) {
      return [`${answer.status} but the contract says ${count !== null ? 'accept' : 'refuse'}`];
    }
    if (ok && JSON.stringify(json(answer.text)) !== JSON.stringify({ ok: true, count })) {
      return [`2xx body ${answer.text.slice(0, 80)}, expected {"ok":true,"count":${count}}`];
    }
    return [];
  };
}

async function fuzz(path: string, body: Buffer, contentType?: string) {
  await ledger.send(path, post(path, body, contentType), { judge: expectation(path, body) });
}

const runs = budget().fuzzRuns;
const withKey = (template: Record<string, unknown>) => ({ api_key: '@KEY@', ...template });
/** The key goes in at send time (the arbitraries are built before the engine starts). */
const text = (value: Hostile) =>
  Buffer.from(toJsonText(value).replaceAll('"@KEY@"', () => JSON.stringify(key)));

const QUERY_TEMPLATES = [
  {
    graph_type: 'Single Line',
    IANA_time_zone: 'UTC',
    start: '7 days ago',
    end: 'now',
    granularity: 'Day',
    filters: [['tag', '=', 'a']],
  },
  {
    graph_type: 'Multi Line',
    IANA_time_zone: 'Asia/Kolkata',
    start: '30 days ago',
    end: 'now',
    split: 'tenant',
    aggregation: 'Sum',
    metric: 'n',
  },
  {
    graph_type: 'Table',
    start: '30 days ago',
    end: 'now',
    split: 'tag',
    filters: [
      ['n', '>', 10],
      ['tenant', '≠', 'acme'],
    ],
  },
  { graph_type: 'Samples', start: 0, end: 'now', order: 'Ascending', collection: 'all_events' },
  {
    graph_type: 'Single Value',
    start: '01/02/2025 3:04 pm',
    end: '2026-01-01T00:00:00Z',
    compare: '1 week ago',
    aggregation: 'P95',
    metric: 'n',
  },
  {
    graph_type: 'Ratio Line',
    start: '30 days ago',
    end: 'now',
    numerator_filters: [['tag', '=', 'a']],
    denominator_filters: [],
    customizations: { hideMissing: true },
  },
  {
    graph_type: 'Bar Chart',
    sql_query:
      "SELECT JSONExtractString(json, 'tag') AS label, count(*) AS v FROM all_events GROUP BY 1",
    label_column: 'label',
    value_column: 'v',
  },
  {
    graph_type: 'Table',
    sql_query: 'SELECT timestamp, json FROM base ORDER BY timestamp DESC LIMIT 5',
  },
].map(withKey);

const LOG_TEMPLATES = [
  { json: { uid: 'f', tenant: 'acme', tag: 'a', n: 1 }, timestamp: 1_700_000_000 },
  { json: '{"uid":"g","nested":{"deep":[1,2,{"x":null}]}}', collection: 'fuzzed' },
  { json: { a: 'b' }, timestamp: '1700000000.5', collection: 'other' },
].map(withKey);

const BULK_TEMPLATES = [
  { jsons: ['{"uid":"h1"}', '{"uid":"h2","tag":"b"}'], timestamp: 1_700_000_100 },
  { jsons: [{ uid: 'h3' }, '{"uid":"h4"}'], collection: 'fuzzed' },
].map(withKey);

/** A bulk body whose `jsons` elements are themselves mutated. */
const bulkWithHostileElements = fc
  .array(
    fc.oneof(
      { arbitrary: fc.constant<Hostile>('{"uid":"ok"}'), weight: 3 },
      { arbitrary: fc.constant<Hostile>({ obj: [['uid', 'ok']] }), weight: 2 },
      { arbitrary: hostileValue, weight: 2 },
    ),
    { maxLength: 8 },
  )
  .map(
    (jsons): Hostile => ({
      obj: [
        ['api_key', '@KEY@'],
        ['jsons', jsons],
      ],
    }),
  );

const KEYLESS = fc.oneof(hostileValue, fc.constant<Hostile>({ obj: [['api_key', 'not-the-key']] }));

describe('properties', () => {
  test('POST /api/visualize/data: mutated valid queries', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...QUERY_TEMPLATES).chain(mutatedBody), (body) =>
        fuzz('/api/visualize/data', text(body)),
      ),
      { numRuns: runs },
    );
  });

  test('POST /api/visualize/data: arbitrary values, with and without the key', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          KEYLESS,
          hostileValue.map(
            (v): Hostile => ({
              obj: [
                ['api_key', '@KEY@'],
                ['graph_type', v],
              ],
            }),
          ),
        ),
        (body) => fuzz('/api/visualize/data', text(body)),
      ),
      { numRuns: runs },
    );
  });

  test('POST /api/log: mutated valid events', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...LOG_TEMPLATES).chain(mutatedBody), (body) =>
        fuzz('/api/log', text(body)),
      ),
      { numRuns: runs },
    );
  });

  test('POST /api/bulk-log: mutated valid batches and hostile elements', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constantFrom(...BULK_TEMPLATES).chain(mutatedBody), bulkWithHostileElements),
        (body) => fuzz('/api/bulk-log', text(body)),
      ),
      { numRuns: runs },
    );
  });

  test('POST /api/collections: mutated and arbitrary bodies', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(mutatedBody(withKey({})), KEYLESS), (body) =>
        fuzz('/api/collections', text(body)),
      ),
      { numRuns: runs },
    );
  });

  test('every endpoint: raw bytes, invalid UTF-8, any content type', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/api/visualize/data', '/api/log', '/api/bulk-log', '/api/collections'),
        hostileBytes,
        fc.constantFrom(
          'application/json',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          '',
        ),
        (path, bytes, type) => fuzz(path, bytes, type),
      ),
      { numRuns: runs },
    );
  });
});

describe('fixed hostile cases', () => {
  const PATHS = ['/api/visualize/data', '/api/log', '/api/bulk-log', '/api/collections'] as const;

  test('deep nesting, as the body and inside every field', async () => {
    // 100,000 levels only in the full run (each such body takes the engine ~0.5 s to refuse).
    const depths = budget().name === 'full' ? [1_000, 10_000, 100_000] : [1_000, 10_000];
    for (const depth of depths) {
      for (const kind of ['array', 'object', 'mixed'] as const) {
        const deep = deeplyNested(depth, kind);
        const k = JSON.stringify(key);
        const bodies: Record<(typeof PATHS)[number], string[]> = {
          '/api/visualize/data': [
            deep,
            `{"api_key":${k},"graph_type":"Table","split":"tag","start":"1 day ago","end":"now","filters":${deep}}`,
            `{"api_key":${k},"graph_type":"Single Value","start":"1 day ago","end":"now","customizations":${deep}}`,
            `{"api_key":${k},"graph_type":${deep},"start":${deep},"end":${deep}}`,
          ],
          '/api/log': [
            deep,
            `{"api_key":${k},"json":${deep}}`,
            `{"api_key":${k},"json":${JSON.stringify(`{"x":${deep}}`)}}`,
          ],
          '/api/bulk-log': [
            deep,
            `{"api_key":${k},"jsons":[${deep}]}`,
            `{"api_key":${k},"jsons":${deep}}`,
          ],
          '/api/collections': [deep, `{"api_key":${k},"extra":${deep}}`],
        };
        for (const path of PATHS)
          for (const body of bodies[path]) await fuzz(path, Buffer.from(body));
      }
    }
  });

  test('prototype keys, giant numbers, NaN-like strings, huge strings', async () => {
    const k = JSON.stringify(key);
    const cases: Array<[(typeof PATHS)[number], string]> = [
      [
        '/api/log',
        `{"api_key":${k},"json":{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}}`,
      ],
      ['/api/log', `{"__proto__":{"api_key":${k}},"json":{"a":1}}`],
      ['/api/log', `{"api_key":${k},"json":{"a":1},"collection":"__proto__"}`],
      ['/api/log', `{"api_key":${k},"json":{"a":1},"collection":"constructor"}`],
      ['/api/log', `{"api_key":${k},"json":{"a":1e400,"b":123456789012345678901234567890}}`],
      ['/api/log', `{"api_key":${k},"json":{"a":1},"timestamp":1e400}`],
      ['/api/log', `{"api_key":${k},"json":{"a":1},"timestamp":"NaN"}`],
      ['/api/log', `{"api_key":${k},"json":{"a":1},"timestamp":"Infinity"}`],
      ['/api/log', `{"api_key":${k},"json":{"a":1},"timestamp":-0}`],
      ['/api/log', `{"api_key":${k},"json":{"a":1},"timestamp":253402300800}`],
      ['/api/log', `{"api_key":${k},"json":{"a":"${'x'.repeat(5_000_000)}"}}`],
      ['/api/log', `{"api_key":${k},"json":{"${'k'.repeat(100_000)}":1}}`],
      ['/api/log', `{"api_key":${k},"json":{"a":1},"collection":"${'c'.repeat(201)}"}`],
      ['/api/log', `{"api_key":${k},"json":"{\\"a\\":\\"\\ud800\\"}"}`],
      ['/api/log', `{"api_key":${k},"json":{"\\ud800":"\\udfff"}}`],
      ['/api/log', `{"api_key":${k},"api_key":"wrong","json":{"a":1}}`],
      ['/api/log', `{"api_key":"wrong","api_key":${k},"json":{"a":1}}`],
      [
        '/api/bulk-log',
        `{"api_key":${k},"jsons":[${Array.from({ length: 10_001 }, () => '"{}"').join(',')}]}`,
      ],
      [
        '/api/bulk-log',
        `{"api_key":${k},"jsons":[${Array.from({ length: 2_000 }, (_, i) => `{"k${i}":${i}}`).join(',')}]}`,
      ],
      [
        '/api/visualize/data',
        `{"api_key":${k},"graph_type":"Single Line","start":1e400,"end":"now"}`,
      ],
      [
        '/api/visualize/data',
        `{"api_key":${k},"graph_type":"Single Line","start":"NaN","end":"Infinity"}`,
      ],
      [
        '/api/visualize/data',
        `{"api_key":${k},"graph_type":"Single Line","start":-1e308,"end":1e308,"granularity":"Minute"}`,
      ],
      [
        '/api/visualize/data',
        `{"api_key":${k},"graph_type":"Single Line","start":"0","end":"now","granularity":"Minute"}`,
      ],
      [
        '/api/visualize/data',
        `{"api_key":${k},"graph_type":"Table","split":"__proto__","start":0,"end":"now"}`,
      ],
      [
        '/api/visualize/data',
        `{"api_key":${k},"graph_type":"Table","split":"constructor.prototype","start":0,"end":"now","filters":[["__proto__","=","x"]]}`,
      ],
      [
        '/api/visualize/data',
        `{"api_key":${k},"graph_type":"Table","sql_query":"${'SELECT 1 UNION ALL '.repeat(6_000)}SELECT 1"}`,
      ],
      [
        '/api/visualize/data',
        `{"api_key":${k},"graph_type":"Table","sql_query":"SELECT 1; DROP TABLE all_events"}`,
      ],
      [
        '/api/visualize/data',
        `{"api_key":${k},"graph_type":"Table","sql_query":${JSON.stringify('"'.repeat(1000))}}`,
      ],
      [
        '/api/visualize/data',
        `{"api_key":${k},"graph_type":"Table","sql_query":"SELECT * FROM read_text('/etc/passwd')"}`,
      ],
      [
        '/api/visualize/data',
        `{"api_key":${k},"graph_type":"Table","sql_query":"SELECT current_setting('memory_limit') AS m"}`,
      ],
      [
        '/api/visualize/data',
        `{"api_key":${k},"graph_type":"Table","IANA_time_zone":"../../../../etc/passwd","start":0,"end":"now","split":"tag"}`,
      ],
      ['/api/collections', `{"api_key":${k},"__proto__":null}`],
      ['/api/collections', `{"api_key":{"toString":${k}}}`],
      ['/api/collections', `{"api_key":[${k}]}`],
    ];
    for (const [path, body] of cases) await fuzz(path, Buffer.from(body));
  });

  test('a body past the 10 MiB limit is 413, without reading it all', async () => {
    const body = Buffer.alloc(11 * 2 ** 20, 0x61);
    for (const path of PATHS) {
      const answer = await ledger.send(path, post(path, body), { parserMayRefuse: true });
      expect(answer.status).toBe(413);
    }
  });

  test('unknown routes: 404 JSON; other methods: 405 JSON', async () => {
    for (const [method, path, status] of [
      ['GET', '/api/log', 405],
      ['PUT', '/api/visualize/data', 405],
      ['GET', '/%ff%fe', 404],
      ['DELETE', '/api/collections', 405],
      ['GET', '/api/../../etc/passwd', 404],
    ] as const) {
      const answer = await ledger.send(`${method} (other routes)`, { method, path });
      expect(answer.status, `${method} ${path}`).toBe(status);
    }
  });
});

test('after everything: the engine process is still up and never printed the key', async () => {
  const health = await rawRequest(engine.url, { method: 'GET', path: '/health' });
  expect(health.status).toBe(200);
  expect(JSON.parse(health.text)).toEqual({ ok: true });
  expect(engine.process.child.exitCode).toBeNull();
  expect(engine.process.output()).not.toContain(key);
});
