import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { API_KEY, startServer, type TestServer } from './helpers/engine-server.ts';
import { bytesOf, countIn, sendRaw } from './helpers/raw-bodies.ts';

/**
 * Bytes that are not well-formed UTF-8, and number literals beyond the doubles, sent over real
 * HTTP as raw bytes: refused with a 400 that names the line and field, nothing of the request
 * stored, on every driver. The string "1e400" stays a value (the query semantics' number rule).
 */

let server: TestServer;
let collections = 0;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.close();
});

const ILL_FORMED: Array<[string, number[]]> = [
  ['an encoded surrogate (ED A0 80)', [0xed, 0xa0, 0x80]],
  ['an overlong slash (C0 AF)', [0xc0, 0xaf]],
  ['an overlong three-byte form', [0xe0, 0x80, 0xaf]],
  ['a sequence cut short', [0xe2, 0x82]],
  ['a stray continuation byte', [0x80]],
  ['a byte never used in UTF-8', [0xff]],
  ['a code point past U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
];

describe.each(ILL_FORMED)('ill-formed UTF-8: %s', (_, bad) => {
  test('in a value of /api/log: 400 naming the field, nothing stored', async () => {
    const collection = `utf${collections++}`;
    const answer = await sendRaw(
      server,
      '/api/log',
      bytesOf(
        `{"api_key":"${API_KEY}","collection":"${collection}","json":{"ok":1,"user":{"name":"x`,
        bad,
        'y"}}}',
      ),
    );
    expect(answer).toEqual({
      status: 400,
      body: { error: 'json: field "user.name" is not valid UTF-8' },
    });
    expect(await countIn(server, collection)).toBe(0);
  });

  test('in a key of /api/log', async () => {
    const answer = await sendRaw(
      server,
      '/api/log',
      bytesOf(`{"api_key":"${API_KEY}","json":{"user":{"k`, bad, '":1}}}'),
    );
    expect(answer).toEqual({
      status: 400,
      body: { error: 'json: a key in field "user" is not valid UTF-8' },
    });
  });

  test('in a jsons text of /api/bulk-log: 400 naming the line and field, no event stored', async () => {
    const collection = `utf${collections++}`;
    const answer = await sendRaw(
      server,
      '/api/bulk-log',
      bytesOf(
        `{"api_key":"${API_KEY}","collection":"${collection}","jsons":["{\\"a\\":1}",{"b":2},"{\\"tags\\":[\\"x\\",\\"`,
        bad,
        '\\"]}"]}',
      ),
    );
    expect(answer).toEqual({
      status: 400,
      body: { error: 'jsons[2]: field "tags[1]" is not valid UTF-8' },
    });
    expect(await countIn(server, collection)).toBe(0);
  });
});

test('ill-formed UTF-8 in the collection name, and outside any string', async () => {
  expect(
    await sendRaw(
      server,
      '/api/log',
      bytesOf(`{"api_key":"${API_KEY}","collection":"c`, [0xc0, 0xaf], '","json":{}}'),
    ),
  ).toEqual({ status: 400, body: { error: 'collection: is not valid UTF-8' } });
  expect(
    await sendRaw(
      server,
      '/api/bulk-log',
      bytesOf(`{"api_key":"${API_KEY}","jsons":[]}`, [0xe2, 0x82]),
    ),
  ).toEqual({ status: 400, body: { error: 'request body: is not valid UTF-8' } });
});

describe('number literals beyond the doubles', () => {
  test.each([
    ['1e400 in an object', '/api/log', '"json":{"a":{"b":[1,1e400]}}', 'json: field "a.b[1]"'],
    ['-1e400 in an object', '/api/log', '"json":{"m":-1e400}', 'json: field "m"'],
    ['1E+400 in a json text', '/api/log', '"json":"{\\"m\\":1E+400}"', 'json: field "m"'],
    [
      '-1e400 in a jsons text',
      '/api/bulk-log',
      '"jsons":["{\\"a\\":1}","{\\"n\\":{\\"x\\":-1e400}}"]',
      'jsons[1]: field "n.x"',
    ],
    [
      '400 digits in a jsons object',
      '/api/bulk-log',
      `"jsons":[{"big":${'9'.repeat(400)}}]`,
      'jsons[0]: field "big"',
    ],
  ])('%s: 400 naming the field, nothing stored', async (_, path, rest, where) => {
    const collection = `num${collections++}`;
    const answer = await sendRaw(
      server,
      path,
      bytesOf(`{"api_key":"${API_KEY}","collection":"${collection}",${rest}}`),
    );
    expect(answer).toEqual({
      status: 400,
      body: { error: `${where} is a number beyond the range of a double (±1.8e308)` },
    });
    expect(await countIn(server, collection)).toBe(0);
  });

  test('the string "1e400", 1e308 and 1e-400 are values, stored', async () => {
    const collection = `num${collections++}`;
    const answer = await sendRaw(
      server,
      '/api/bulk-log',
      bytesOf(
        `{"api_key":"${API_KEY}","collection":"${collection}","jsons":[{"a":"1e400"},"{\\"a\\":1e308}",{"a":1e-400}]}`,
      ),
    );
    expect(answer).toEqual({ status: 200, body: { ok: true, count: 3 } });
    expect(await countIn(server, collection)).toBe(3);
  });
});

test('well-formed text past ASCII is stored as sent, byte for byte', async () => {
  const collection = `utf${collections++}`;
  const text = '{"name":"é€🦆\u{10ffff}\ud7ff\ue000"}';
  const answer = await sendRaw(
    server,
    '/api/bulk-log',
    bytesOf(
      `{"api_key":"${API_KEY}","collection":"${collection}","jsons":[${JSON.stringify(text)}]}`,
    ),
  );
  expect(answer.status).toBe(200);
  const samples = await server.post('/api/visualize/data', {
    api_key: API_KEY,
    collection,
    graph_type: 'Samples',
    start: '1 year ago',
    end: 'now',
  });
  expect(samples.status).toBe(200);
  expect(samples.body.result.map((r: { json: unknown }) => r.json)).toEqual([JSON.parse(text)]);
});
