import { describe, expect, it } from 'vitest';
import { httpBackend } from '../src/backend/http-backend.ts';
import { createEdge } from '../src/create-edge.ts';
import { mountEdge } from '../src/http/mount-edge.ts';
import { generateSigningKey } from '../src/tokens/signing-keys.ts';

const config = {
  signingKeys: [generateSigningKey()],
  backend: httpBackend({ baseUrl: 'http://127.0.0.1:9', apiKey: 'some-workspace-key' }),
  queries: { total: { query: { graph_type: 'Single Value', start: '1 day ago', end: 'now' } } },
};

/** How many handlers Hono's router gives a request: with one, Hono calls it directly. */
function handlersFor(app: ReturnType<typeof mountEdge>, method: string, path: string): number {
  return (app.router.match(method, path) as unknown as [unknown[]])[0].length;
}

describe('routing', () => {
  // Hono calls a lone handler directly and composes several in an async chain; the data route
  // answers cached requests synchronously, so a second handler on its path (an `app.all`, a
  // middleware) would cost every widget request. The edge bench measures it; this guards it.
  it.each([
    ['same origin only', {}],
    ['with cross-origin readers', { allowedOrigins: ['https://app.example.com', '*'] }],
  ])('gives the data route one handler per request (%s)', (_, extra) => {
    for (const base of ['', '/analytics']) {
      const app = mountEdge(createEdge({ ...config, ...extra }), base);
      expect(handlersFor(app, 'GET', `${base}/api/data`), base).toBe(1);
      expect(handlersFor(app, 'POST', `${base}/api/data`), base).toBe(1);
      if ('allowedOrigins' in extra) {
        expect(handlersFor(app, 'OPTIONS', `${base}/api/data`), base).toBe(1);
      }
    }
  });
});
