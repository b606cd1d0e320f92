import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { canonicalNumberTexts } from '../src/ingest/number-texts.ts';
import { DRIVER } from './helpers/driver.ts';
import { API_KEY, startServer, type TestServer } from './helpers/engine-server.ts';
import { expectClose } from './helpers/expect-close.ts';
import { type FixtureEvent, referenceAnswer } from './helpers/reference.ts';

/**
 * Number texts that `JSON.stringify` never writes (`1.0`, `1e2`, `1.50`, `-0.0`), sent inside
 * payload strings, which are stored as sent: every driver must read each as its number's one
 * string form, so splits, `=`, `includes` and aggregations answer as the reference does on the
 * parsed events.
 */

const NOW = 1_700_000_000;
const COLLECTION = 'number_texts';

/** Each number text twice, once at the top and once nested, beside strings that only look like numbers. */
const TEXTS = [
  '1.0',
  '1',
  '0.1e1',
  '1e2',
  '100',
  '100.000',
  '-0.0',
  '-0',
  '0',
  '1E21',
  '1e+21',
  '100.50',
  '5e-324',
  '2.5E-3',
  '-1.50e1',
];

const PAYLOADS = TEXTS.flatMap((text, i) => [
  `{"nn": ${text}, "i": ${i}, "s": "${text}", "deep": {"list": [${text}, "${text}"], "n": ${text}}}`,
  `{ "nn" : ${text} , "tag" : "t${i % 3}" }`,
]);

const EVENTS: FixtureEvent[] = PAYLOADS.map((text, i) => ({
  timestamp: NOW - 1000 + i,
  json: JSON.parse(text),
}));

let server: TestServer;

beforeAll(async () => {
  // No body here is past the inline limit: no body workers.
  server = await startServer({ now: () => NOW, bodyWorkers: 0 });
  const written = await server.post('/api/bulk-log', {
    api_key: API_KEY,
    collection: COLLECTION,
    jsons: PAYLOADS.map((text, i) => ({ text, i })).map(({ text }) => text),
    timestamp: NOW - 1000,
  });
  expect(written.body).toEqual({ ok: true, count: PAYLOADS.length });
});

afterAll(() => server?.close());

async function check(body: Record<string, unknown>): Promise<void> {
  const request = {
    api_key: API_KEY,
    collection: COLLECTION,
    start: NOW - 86_400,
    end: NOW,
    IANA_time_zone: 'UTC',
    ...body,
  };
  // The bulk shares one timestamp; the reference sees the same.
  const events = EVENTS.map((e) => ({ ...e, timestamp: NOW - 1000 }));
  const expected = referenceAnswer(events, request, NOW, COLLECTION);
  const answer = await server.post('/api/visualize/data', request);
  const label = `${DRIVER} ${JSON.stringify(body)}`;
  if (answer.status !== 200) expect.fail(`${answer.status} ${answer.text} ${label}`);
  expectClose(answer.body, expected, label);
}

describe('number texts JSON.stringify never writes', () => {
  test('split labels, one per number, whatever text wrote it', async () => {
    for (const split of ['nn', 'deep.n', 's']) {
      await check({ graph_type: 'Table', split, aggregation: 'Count' });
    }
  });

  test('=, ≠, includes, > and < on numbers and their texts', async () => {
    const values = [1, '1.0', '1e2', '-0', 1e21, 100.5, '.', 'e', '-15'];
    for (const field of ['nn', 's']) {
      for (const value of values) {
        for (const op of ['=', '≠', 'includes', '>', '<']) {
          await check({ graph_type: 'Single Value', filters: [[field, op, value]] });
        }
      }
    }
  });

  test('Sum, Avg and a percentile', async () => {
    for (const aggregation of ['Sum', 'Avg', 'P50']) {
      await check({ graph_type: 'Single Value', aggregation, metric: 'nn' });
      await check({ graph_type: 'Table', split: 'tag', aggregation, metric: 'deep.n' });
    }
  });

  test('Samples give the payload back as sent, its numbers in their one form', async () => {
    const answer = await server.post('/api/visualize/data', {
      api_key: API_KEY,
      collection: COLLECTION,
      graph_type: 'Samples',
      start: 0,
      end: NOW,
      order: 'Ascending',
    });
    expect(answer.status).toBe(200);
    // JSON.stringify writes -0 as 0, as the rule reads it.
    expect(answer.body.result.map((row: { json: unknown }) => JSON.stringify(row.json))).toEqual(
      EVENTS.map((e) => JSON.stringify(e.json)),
    );
    // White space is kept; only the numbers' texts change.
    expect(answer.text).toContain('{ "nn" : 1 , "tag" : "t0" }');
    expect(answer.text).toContain('"s": "1.0", "deep": {"list": [1, "1.0"], "n": 1}');
  });
});

describe('canonicalNumberTexts', () => {
  test('rewrites numbers only, as JSON.stringify writes them, and leaves strings alone', () => {
    for (const text of PAYLOADS) {
      const out = canonicalNumberTexts(text);
      expect(JSON.stringify(JSON.parse(out))).toBe(JSON.stringify(JSON.parse(text)));
      // Every number now reads back as the text JSON.stringify writes for it.
      const numbers = out.replace(/"(?:[^"\\]|\\.)*"/g, '""').match(/-?\d[\d.eE+-]*/g) ?? [];
      for (const n of numbers) expect(JSON.stringify(Number(n))).toBe(n);
    }
    const tricky =
      '{"a\\"1.0": "x\\\\", "b": [1.0, -0.0, "1.0"], "c": 1e400, "d": [0.000, 2.50E+1]}';
    expect(canonicalNumberTexts(tricky)).toBe(
      '{"a\\"1.0": "x\\\\", "b": [1, 0, "1.0"], "c": 1e400, "d": [0, 25]}',
    );
    // Digits a double cannot hold are kept: rewriting them would lose an id or a decimal.
    const exact =
      '{"id": 12345678901234567890123, "n": 9007199254740993, "d": 0.10000000000000000001}';
    expect(canonicalNumberTexts(exact)).toBe(exact);
    const same = '{"a":1,"b":"2.0"}';
    expect(canonicalNumberTexts(same)).toBe(same);
  });
});
