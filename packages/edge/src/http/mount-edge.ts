import { Hono } from 'hono';
import type { Edge } from '../create-edge.ts';
import { notFoundResponse } from './respond.ts';

/**
 * A Hono app serving `edge` under `basePath` (e.g. `/analytics`), ready for any runtime's server:
 * `Deno.serve(app.fetch)`, `Bun.serve({ fetch: app.fetch })`, a Worker's `fetch`. Unmatched
 * paths get the edge's JSON 404: Hono answers them with the outermost app's handler, so mounting
 * `edge.app` in a bare app would give them a plain-text one.
 */
export function mountEdge(edge: Edge | Hono, basePath = ''): Hono {
  const app = new Hono();
  app.notFound(notFoundResponse);
  app.route(basePath, edge instanceof Hono ? edge : edge.app);
  return app;
}
