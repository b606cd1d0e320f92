import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Engine, EngineResponse } from '../engine.ts';
import { samplesJson } from '../query/samples.ts';

/**
 * The engine's HTTP app: the hosted service's endpoints over {@link Engine}, with open CORS as
 * the service has. Bodies are read as JSON whatever their content type; the key is only ever
 * read from the body (a header, query string or cookie is not looked at). Every failure is
 * `{"error": "<sentence>"}`: 400 for a body that is not JSON, 413 above the size limit, 404 for
 * unknown routes.
 */
export function createEngineApp(engine: Engine): Hono {
  const app = new Hono();
  app.use('*', cors());
  app.get('/health', (c) => c.json({ ok: true }));

  const limit = bodyLimit({
    maxSize: engine.maxBodyBytes,
    onError: (c) =>
      c.json({ error: `request body is larger than ${engine.maxBodyBytes} bytes` }, 413),
  });
  const route = (path: string, handle: (body: unknown) => Promise<EngineResponse<unknown>>) => {
    app.post(path, limit, async (c) => {
      let body: unknown;
      try {
        body = JSON.parse(await c.req.text());
      } catch {
        return c.json({ error: 'request body: is not valid JSON' }, 400);
      }
      const answer = await handle(body);
      const status = answer.status as ContentfulStatusCode;
      const raw = answer.status === 200 ? samplesJson(answer.body) : undefined;
      if (raw !== undefined) {
        return c.body(raw, status, { 'Content-Type': 'application/json; charset=UTF-8' });
      }
      return c.json(answer.body as object, status);
    });
  };
  route('/api/visualize/data', (body) => engine.query(body));
  route('/api/log', (body) => engine.log(body));
  route('/api/bulk-log', (body) => engine.bulkLog(body));
  route('/api/collections', (body) => engine.collections(body));

  app.notFound((c) => c.json({ error: `no route for ${c.req.method} ${c.req.path}` }, 404));
  app.onError((error, c) => {
    engine.logError('HTTP request failed', error);
    return c.json({ error: 'internal error' }, 500);
  });
  return app;
}
