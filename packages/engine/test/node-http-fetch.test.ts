import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { nodeHttpFetch } from '../src/drivers/clickhouse/node-http-fetch.ts';

/**
 * The `fetch` the ClickHouse client sends its requests with (`node-http-fetch.ts`), against a
 * local server, for what the ClickHouse tests (`test/clickhouse/connection.test.ts`) do not
 * reach: the kinds of body it sends, answers without a body, and an abort while a body arrives.
 */

let server: Server;
let base = '';
/** Whether the connection of the last `/slow` request was closed by the client. */
let slowClosed: Promise<void> = Promise.resolve();

function handle(req: IncomingMessage, res: ServerResponse) {
  if (req.url === '/empty') {
    res.writeHead(204, { 'x-reply': 'none' });
    res.end();
    return;
  }
  if (req.url === '/slow') {
    slowClosed = new Promise((resolve) => res.once('close', () => resolve()));
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('first part ');
    return;
  }
  // Echoes the method, a header and the body's bytes.
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    res.writeHead(201, { 'x-method': req.method ?? '', 'x-test': String(req.headers['x-test']) });
    res.end(Buffer.concat(chunks));
  });
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('nodeHttpFetch', () => {
  const send = nodeHttpFetch(2);
  const bytes = Uint8Array.from([0, 1, 2, 250, 255]);

  test.each([
    ['text', 'SELECT 1 -- é', Buffer.from('SELECT 1 -- é')],
    ['bytes', bytes, Buffer.from(bytes)],
    ['a Blob', new Blob([bytes]), Buffer.from(bytes)],
    [
      'a stream',
      new ReadableStream({
        start(controller) {
          controller.enqueue(bytes);
          controller.enqueue(bytes);
          controller.close();
        },
      }),
      Buffer.concat([bytes, bytes]),
    ],
  ])('sends %s as its body, with its method and headers', async (_, body, expected) => {
    const response = await send(`${base}/echo`, {
      method: 'POST',
      headers: { 'X-Test': 'yes' },
      body,
      // A stream body is sent as it comes (what `fetch` calls half duplex).
      ...({ duplex: 'half' } as object),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-method')).toBe('POST');
    expect(response.headers.get('x-test')).toBe('yes');
    expect(Buffer.from(await response.arrayBuffer())).toEqual(expected);
  });

  test('answers a status without a body with no body', async () => {
    const response = await send(new URL('/empty', base), { method: 'POST', body: 'x' });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
    expect(response.headers.get('x-reply')).toBe('none');
  });

  test('breaks off a body still arriving when the signal aborts, and closes its connection', async () => {
    const controller = new AbortController();
    const response = await send(`${base}/slow`, { method: 'POST', signal: controller.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value ?? []).toString()).toBe('first part ');
    controller.abort(new Error('stop'));
    await expect(reader.read()).rejects.toThrow();
    await slowClosed;
  });

  test('rejects with the signal reason when aborted before any answer', async () => {
    const controller = new AbortController();
    controller.abort(new Error('not sent'));
    await expect(
      send(`${base}/echo`, { method: 'POST', signal: controller.signal }),
    ).rejects.toThrow('not sent');
  });
});
