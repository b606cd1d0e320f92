import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

/** Statuses whose answer has no body, which a `Response` must be built without. */
const NO_BODY = new Set([204, 205, 304]);

/**
 * The `fetch` the ClickHouse client sends its requests with, over Node's own HTTP client rather
 * than the platform's `fetch` (undici), which costs each request more on the engine's side. Its
 * connections are kept alive and pooled, at most `limit` open at once: a request beyond them
 * waits for one, which stays busy until its answer's body has been read to the end, failed or
 * been cancelled. A failure to connect, or a connection closed under a request, rejects with the
 * system's error (its `code`, as `clickhouse-errors.ts` reads it); aborting the request's signal
 * rejects with the signal's reason. It does what the client asks of `fetch`, not all of `fetch`:
 * a URL as text or a `URL`, and a body that is text, bytes, a `Blob` or a stream.
 */
export function nodeHttpFetch(limit: number): typeof fetch {
  const agents = {
    'http:': new HttpAgent({ keepAlive: true, maxSockets: limit }),
    'https:': new HttpsAgent({ keepAlive: true, maxSockets: limit }),
  };
  return async (input, init) => {
    if (typeof input !== 'string' && !(input instanceof URL)) {
      throw new TypeError('nodeHttpFetch takes a URL, not a Request');
    }
    const url = new URL(input);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError(`nodeHttpFetch cannot reach a ${url.protocol} URL`);
    }
    const body = await bodyOf(init?.body);
    const signal = init?.signal ?? undefined;
    signal?.throwIfAborted();
    return new Promise<Response>((resolve, reject) => {
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(
        url,
        {
          method: init?.method ?? 'GET',
          headers: Object.fromEntries(new Headers(init?.headers)),
          agent: agents[url.protocol as 'http:' | 'https:'],
        },
        (res) => {
          // An abort while the body arrives breaks it off, as `fetch`'s does.
          res.once('close', done);
          try {
            resolve(responseOf(res));
          } catch (error) {
            // A status no `Response` can carry fails this request, not the process.
            res.destroy();
            reject(error);
          }
        },
      );
      const abort = () => req.destroy(signal?.reason);
      const done = () => signal?.removeEventListener('abort', abort);
      signal?.addEventListener('abort', abort, { once: true });
      req.once('error', (error) => {
        done();
        reject(error);
      });
      if (body instanceof Readable) {
        body.once('error', (error) => req.destroy(error));
        body.pipe(req);
      } else req.end(body);
    });
  };
}

/** A request body as Node's client writes it. */
async function bodyOf(
  body: RequestInit['body'] | undefined,
): Promise<string | Uint8Array | Readable | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body))
    return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof Blob) return new Uint8Array(await body.arrayBuffer());
  if (body instanceof ReadableStream) return Readable.fromWeb(body as NodeReadableStream);
  throw new TypeError('nodeHttpFetch cannot send this kind of body');
}

/** A web `Response` of Node's answer, its body read as it arrives. */
function responseOf(res: IncomingMessage): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  const status = res.statusCode ?? 500;
  if (NO_BODY.has(status)) {
    res.resume();
    return new Response(null, { status, statusText: res.statusMessage, headers });
  }
  const body = Readable.toWeb(res) as ReadableStream<Uint8Array>;
  return new Response(body, { status, statusText: res.statusMessage, headers });
}
