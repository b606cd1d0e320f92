import type { IncomingMessage } from 'node:http';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Engine, EngineResponse } from '../engine.ts';
import { decodeJsonBody } from '../ingest/ingest-body.ts';

/**
 * Open CORS, as the service has it, on every answer. Set on each response directly rather than
 * by Hono's `cors()` around every route: that middleware writes into a placeholder response
 * before the handler runs, and merging it into the handler's response costs @hono/node-server
 * its fast path on every request (and the size limit's middleware as much again).
 * Preflight requests still get Hono's `cors()`.
 */
const OPEN = { 'Access-Control-Allow-Origin': '*' } as const;
const JSON_TYPE = { ...OPEN, 'Content-Type': 'application/json; charset=UTF-8' } as const;

/**
 * The body size limit. A body that declares its length is judged by its `Content-Length`
 * header alone (Node's HTTP parser never reads past it), so its bytes stay with the server's
 * own fast reader; only a body of unknown length (chunked) goes through Hono's `bodyLimit`,
 * which counts it as it streams in.
 */
function sizeLimit(maxBytes: number, tooLarge: (c: Context) => Response): MiddlewareHandler {
  const streamed = bodyLimit({ maxSize: maxBytes, onError: tooLarge });
  return async (c, next) => {
    const length = c.req.header('content-length');
    if (length !== undefined && c.req.header('transfer-encoding') === undefined) {
      return Number(length) > maxBytes ? tooLarge(c) : next();
    }
    return streamed(c, next);
  };
}

/**
 * A body's bytes. On Node's HTTP server, a body of declared length is read straight into one
 * buffer of that length: Hono's reader concatenates the chunks and copies the result again,
 * which for large bulks costs the main thread (and its garbage collector) two more copies.
 */
function bodyBytes(c: Context): Promise<Uint8Array> {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  const length = Number(c.req.header('content-length'));
  if (
    !incoming ||
    incoming.readableDidRead ||
    c.req.header('transfer-encoding') !== undefined ||
    !Number.isSafeInteger(length)
  ) {
    return c.req.arrayBuffer().then((buffer) => new Uint8Array(buffer));
  }
  return new Promise((resolve, reject) => {
    const bytes = new Uint8Array(length);
    let at = 0;
    const settle = (error?: Error) => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', settle);
      incoming.off('close', onClose);
      if (error) reject(error);
      else resolve(bytes);
    };
    const onData = (chunk: Buffer) => {
      // Node's parser never reads past Content-Length; the check keeps the copy in bounds anyway.
      if (chunk.length > length - at) return settle(new Error('request body past its length'));
      bytes.set(chunk, at);
      at += chunk.length;
    };
    const onEnd = () => settle(at === length ? undefined : new Error('request body cut short'));
    const onClose = () => settle(new Error('request closed before its body ended'));
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', settle);
    incoming.on('close', onClose);
  });
}

/**
 * The engine's HTTP app: the hosted service's endpoints over {@link Engine}, with open CORS as
 * the service has. Bodies are read as JSON whatever their content type; the key is only ever
 * read from the body (a header, query string or cookie is not looked at). Every failure is
 * `{"error": "<sentence>"}`: 400 for a body that is not well-formed UTF-8 (naming the field that
 * holds the first ill-formed bytes) or not JSON, 413 above the size limit, 404 for unknown
 * routes, 405 (with `Allow`) for a method a route does not answer.
 */
export function createEngineApp(engine: Engine): Hono {
  const app = new Hono();
  app.options('*', cors());
  // A known path asked with another method: which ones it answers, in the body and in the Allow
  // header HTTP requires (a 404 would send the caller looking for a missing route). The methods
  // are listed rather than `app.all`, which would add a handler to every served request's chain
  // (and take /health off Hono's one-handler path). HEAD is dispatched as GET; preflights are
  // answered above.
  const only = (path: string, allow: string) => {
    const served = allow.split(', ');
    const refused = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => !served.includes(m));
    app.on(refused, path, (c) =>
      c.json({ error: `${path} answers ${allow} only` }, 405, { ...OPEN, Allow: allow }),
    );
  };
  app.get('/health', (c) => c.json({ ok: true }, 200, OPEN));
  only('/health', 'GET, HEAD');

  const limit = sizeLimit(engine.maxBodyBytes, (c) =>
    c.json({ error: `request body is larger than ${engine.maxBodyBytes} bytes` }, 413, OPEN),
  );
  /**
   * A POST route. `raw` routes (ingest) get the body's bytes, which the engine decodes and
   * checks itself, off the main thread when they are many; the others get it parsed here.
   */
  const route = (
    path: string,
    handle: (body: unknown) => Promise<EngineResponse<unknown>>,
    raw = false,
  ) => {
    app.post(path, limit, async (c) => {
      const bytes = await bodyBytes(c);
      let body: unknown = bytes;
      if (!raw) {
        const decoded = decodeJsonBody(bytes);
        if ('refused' in decoded) return c.json({ error: decoded.refused }, 400, OPEN);
        body = decoded.body;
      }
      const answer = await handle(body);
      const status = answer.status as ContentfulStatusCode;
      if (answer.json !== undefined) return c.body(answer.json, status, JSON_TYPE);
      return c.json(answer.body as object, status, OPEN);
    });
    only(path, 'POST, OPTIONS');
  };
  route('/api/visualize/data', (body) => engine.query(body));
  route('/api/log', (body) => engine.log(body), true);
  route('/api/bulk-log', (body) => engine.bulkLog(body), true);
  route('/api/collections', (body) => engine.collections(body));

  app.notFound((c) => c.json({ error: `no route for ${c.req.method} ${c.req.path}` }, 404, OPEN));
  app.onError((error, c) => {
    engine.logError('HTTP request failed', error);
    return c.json({ error: 'internal error' }, 500, OPEN);
  });
  return app;
}
