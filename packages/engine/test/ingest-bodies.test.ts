import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EngineError } from '../src/engine-error.ts';
import { packBody, unpackBody } from '../src/ingest/body-message.ts';
import {
  BODIES_QUEUE_FULL,
  BodyParsers,
  INLINE_BODY_BYTES,
  MAX_QUEUED_BODIES,
} from '../src/ingest/body-parsers.ts';
import { MAX_EVENT_KEYS } from '../src/storage/seen-key.ts';
import { API_KEY, startServer, type TestServer } from './helpers/engine-server.ts';
import { bytesOf, countIn, sendRaw } from './helpers/raw-bodies.ts';

/**
 * Ingest bodies past INLINE_BODY_BYTES are decoded, parsed and checked in body worker threads,
 * smaller ones on the main thread: each refusal below is sent both ways, over real HTTP as raw
 * bytes, and must get the same 400 naming the same line and field, with nothing stored; the
 * worker pool refuses bodies past its queue's bounds with a 503.
 */

let server: TestServer;
let collections = 0;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.close();
});

/** `n` good events as `jsons` texts, about 400 bytes each, ending in a comma. */
const goodTexts = (n: number) =>
  Array.from(
    { length: n },
    (_, i) => `${JSON.stringify(JSON.stringify({ event: 'ok', i, note: 'x'.repeat(360) }))},`,
  ).join('');

/** Good events before the refused one: none (an inline body), or enough to pass the limit. */
const PADDINGS: Array<[string, number]> = [
  ['inline', 0],
  ['in a body worker', Math.ceil(INLINE_BODY_BYTES / 400) + 10],
];

const idMap = (n: number) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`user_${i}`, i]));
const TOO_WIDE = `holds more than ${MAX_EVENT_KEYS} keys (key paths up to 6 levels deep, objects included); split it into several events`;

describe.each(PADDINGS)('a bulk refused %s', (_, padding) => {
  /** A bulk of `padding` good events, then `bad` (raw bytes of one `jsons` item), then one more. */
  const bulk = (collection: string, ...bad: Array<string | number[]>) =>
    bytesOf(
      `{"api_key":"${API_KEY}","collection":"${collection}","jsons":[${goodTexts(padding)}`,
      ...bad,
      ',{"after":1}]}',
    );

  test('not well-formed UTF-8 in a jsons text: the line and field named', async () => {
    const collection = `bodies${collections++}`;
    const body = bulk(collection, '"{\\"tags\\":[\\"x\\",\\"', [0xed, 0xa0, 0x80], '\\"]}"');
    expect(body.length > INLINE_BODY_BYTES).toBe(padding > 0);
    expect(await sendRaw(server, '/api/bulk-log', body)).toEqual({
      status: 400,
      body: { error: `jsons[${padding}]: field "tags[1]" is not valid UTF-8` },
    });
    expect(await countIn(server, collection)).toBe(0);
  });

  test('an event of too many keys: the line named', async () => {
    const collection = `bodies${collections++}`;
    const body = bulk(collection, JSON.stringify(JSON.stringify(idMap(MAX_EVENT_KEYS + 1))));
    expect(await sendRaw(server, '/api/bulk-log', body)).toEqual({
      status: 400,
      body: { error: `jsons[${padding}]: ${TOO_WIDE}` },
    });
    // The same event as an object rather than text.
    const object = bulk(collection, JSON.stringify(idMap(MAX_EVENT_KEYS + 1)));
    expect(await sendRaw(server, '/api/bulk-log', object)).toEqual({
      status: 400,
      body: { error: `jsons[${padding}]: ${TOO_WIDE}` },
    });
    expect(await countIn(server, collection)).toBe(0);
  });

  test('a jsons text that is not JSON: the line named', async () => {
    const collection = `bodies${collections++}`;
    expect(await sendRaw(server, '/api/bulk-log', bulk(collection, '"{\\"a\\":1,}"'))).toEqual({
      status: 400,
      body: { error: `jsons[${padding}]: is not valid JSON` },
    });
    expect(await countIn(server, collection)).toBe(0);
  });

  test('a body that is not JSON, or not UTF-8 outside any string', async () => {
    const collection = `bodies${collections++}`;
    const cut = bulk(collection, '{"a":1}');
    expect(await sendRaw(server, '/api/bulk-log', cut.subarray(0, cut.length - 1))).toEqual({
      status: 400,
      body: { error: 'request body: is not valid JSON' },
    });
    expect(
      await sendRaw(server, '/api/bulk-log', bulk(collection, '{"a":1}', [0xc0, 0xaf])),
    ).toEqual({
      status: 400,
      body: { error: 'request body: is not valid UTF-8' },
    });
    expect(await countIn(server, collection)).toBe(0);
  });

  test('a bad key comes before bad events, and good bulks are stored in full', async () => {
    const collection = `bodies${collections++}`;
    const wrongKey = bytesOf(
      `{"api_key":"wrong","collection":"${collection}","jsons":[${goodTexts(padding)}"{"]}`,
    );
    expect(await sendRaw(server, '/api/bulk-log', wrongKey)).toEqual({
      status: 400,
      body: { error: 'Invalid API KEY' },
    });
    const good = bulk(collection, '{"a":2}');
    expect(await sendRaw(server, '/api/bulk-log', good)).toEqual({
      status: 200,
      body: { ok: true, count: padding + 2 },
    });
    expect(await countIn(server, collection)).toBe(padding + 2);
  });
});

test('/api/log: one wide event in a body worker gets the same 400 as inline', async () => {
  const collection = `bodies${collections++}`;
  const narrow = bytesOf(
    `{"api_key":"${API_KEY}","collection":"${collection}","json":${JSON.stringify({ a: { b: 1 } })}}`,
  );
  const wide = bytesOf(
    `{"api_key":"${API_KEY}","collection":"${collection}","json":${JSON.stringify(idMap(20_000))}}`,
  );
  expect(wide.length).toBeGreaterThan(INLINE_BODY_BYTES);
  expect(await sendRaw(server, '/api/log', wide)).toEqual({
    status: 400,
    body: { error: `json: ${TOO_WIDE}` },
  });
  expect(await sendRaw(server, '/api/log', narrow)).toEqual({
    status: 200,
    body: { ok: true, count: 1 },
  });
  expect(await countIn(server, collection)).toBe(1);
});

describe('the body workers bound what waits for them', () => {
  const body = (bytes: number) =>
    new TextEncoder().encode(
      JSON.stringify({ api_key: 'k', jsons: [JSON.stringify({ pad: 'x'.repeat(bytes) })] }),
    );

  test(`past ${MAX_QUEUED_BODIES} waiting bodies, a 503`, async () => {
    const parsers = new BodyParsers(1);
    try {
      // One body goes to the worker, the next MAX_QUEUED_BODIES wait, the one after is refused.
      const outcomes = await Promise.allSettled(
        Array.from({ length: MAX_QUEUED_BODIES + 2 }, () =>
          parsers.parse('bulk-log', body(INLINE_BODY_BYTES), 1_800_000_000),
        ),
      );
      const refused = outcomes.filter((o) => o.status === 'rejected');
      expect(refused).toHaveLength(1);
      const reason = (refused[0] as PromiseRejectedResult).reason;
      expect(reason).toBeInstanceOf(EngineError);
      expect(reason).toMatchObject({ status: 503, message: BODIES_QUEUE_FULL });
      for (const outcome of outcomes.slice(0, -1)) {
        expect(outcome).toMatchObject({ status: 'fulfilled', value: { auth: { api_key: 'k' } } });
      }
    } finally {
      await parsers.close();
    }
  });

  test('past the waiting bytes, a 503; a body alone is always taken', async () => {
    const bytes = 1024 * 1024;
    const parsers = new BodyParsers(1, { bodies: MAX_QUEUED_BODIES, bytes });
    const size = 200_000;
    try {
      // One in the worker, then as many as the bytes allow wait; the next is refused.
      const fit = Math.floor(bytes / (size + 100));
      const outcomes = await Promise.allSettled(
        Array.from({ length: fit + 2 }, () => parsers.parse('bulk-log', body(size), 0)),
      );
      expect(outcomes.map((o) => o.status)).toEqual([
        ...Array.from({ length: fit + 1 }, () => 'fulfilled'),
        'rejected',
      ]);
      expect((outcomes.at(-1) as PromiseRejectedResult).reason).toMatchObject({ status: 503 });
      // The queue empty again, a body of more than the bound waits alone.
      const alone = await parsers.parse('bulk-log', body(bytes + 1), 0);
      expect(alone).toMatchObject({ auth: { api_key: 'k' } });
    } finally {
      await parsers.close();
    }
  });
});

describe("a body worker's reply", () => {
  const keys = [{ path: ['a'], kinds: new Set(['number' as const]) }];
  const body = (records: Array<Record<string, unknown>>) => ({
    auth: { api_key: 'k' },
    batch: { collection: 'c', records: records as never, keys },
  });
  test.each([
    [
      'compact texts, then others',
      [
        { timestamp: 5, payload: '{"a":1}', canonical: true },
        { timestamp: 5, payload: '{"a":2}', canonical: true },
        { timestamp: 5, payload: '{ "a": 3 }' },
      ],
    ],
    ['none compact', [{ timestamp: 5, payload: '{ "a": 1 }' }]],
    ['no events', []],
    [
      'two timestamps',
      [
        { timestamp: 5, payload: '{"a":1}', canonical: true },
        { timestamp: 6, payload: '{"a":2}', canonical: true },
      ],
    ],
    [
      'a compact text after another',
      [
        { timestamp: 5, payload: '{ "a": 1 }' },
        { timestamp: 5, payload: '{"a":2}', canonical: true },
      ],
    ],
    ['an object held', [{ timestamp: 5, payload: '{"a":1}', json: { a: 1 }, canonical: true }]],
  ])('gives back the body it packed: %s', (_, records) => {
    const original = body(records);
    const expected = structuredClone(original);
    expect(unpackBody(structuredClone(packBody(original)))).toEqual(expected);
  });

  test('packs texts sharing a timestamp as a list, and leaves refusals as they are', () => {
    const packed = packBody(body([{ timestamp: 5, payload: '{"a":1}', canonical: true }]));
    expect(packed).toEqual({
      auth: { api_key: 'k' },
      packed: { collection: 'c', keys, timestamp: 5, payloads: ['{"a":1}'], canonical: 1 },
    });
    expect(packBody({ refused: 'no' })).toEqual({ refused: 'no' });
    expect(packBody({ auth: null, invalid: 'bad' })).toEqual({ auth: null, invalid: 'bad' });
  });
});
