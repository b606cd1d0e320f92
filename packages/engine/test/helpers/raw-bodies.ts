import { expect } from 'vitest';
import { API_KEY, type TestServer } from './engine-server.ts';

/** Raw bytes: text pieces as UTF-8, number arrays as the bytes they are. */
export const bytesOf = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

/** POSTs raw bytes as they are, so a test can send what no JSON encoder would write. */
export async function sendRaw(server: TestServer, path: string, body: Uint8Array) {
  const response = await fetch(`${server.url}${path}`, { method: 'POST', body });
  return { status: response.status, body: (await response.json()) as { error?: string } };
}

/** How many events `collection` of the default workspace holds, asked as a client would. */
export async function countIn(server: TestServer, collection: string): Promise<number> {
  const answer = await server.post('/api/visualize/data', {
    api_key: API_KEY,
    collection,
    graph_type: 'Single Value',
    start: '1 year ago',
    end: 'now',
    aggregation: 'Count',
  });
  expect(answer.status).toBe(200);
  return answer.body.result[0].Count;
}
