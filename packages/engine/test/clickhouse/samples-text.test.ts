import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { API_KEY, startServer, type TestServer } from '../helpers/engine-server.ts';

/** Samples on the ClickHouse driver send each payload's stored text, as the DuckDB driver does. */

const url = inject('clickhouseUrl');
const password = inject('clickhousePassword');

describe('Samples on ClickHouse', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({
      now: () => 1_700_000_000,
      clickhouse: { url, password, databasePrefix: 'samples_text_' },
    });
  });
  afterAll(() => server?.close());

  test('payloads keep their text: big integers, escapes; numbers a double holds in their one form', async () => {
    const payload =
      '{"big": 12345678901234567890, "price": 1.50, "e": 1E3, "s": "\\u00e9\\/x", "nested": {"a": [1, 2.0]}}';
    const logged = await server.post('/api/log', {
      api_key: API_KEY,
      collection: 'exact',
      json: payload,
      timestamp: 7,
    });
    expect(logged.status).toBe(200);
    const answer = await server.post('/api/visualize/data', {
      api_key: API_KEY,
      collection: 'exact',
      graph_type: 'Samples',
      start: 0,
      end: 100,
      order: 'Ascending',
    });
    expect(answer.status).toBe(200);
    const stored =
      '{"big": 12345678901234567890, "price": 1.5, "e": 1000, "s": "\\u00e9\\/x", "nested": {"a": [1, 2]}}';
    expect(answer.text).toBe(`{"result":[{"timestamp":7,"json":${stored}}],"metadata":{}}`);
    // In process, the same answer is an ordinary envelope of parsed payloads.
    expect(answer.body.result[0].json.price).toBe(1.5);
  });
});
