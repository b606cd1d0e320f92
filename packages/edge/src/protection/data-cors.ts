import type { MiddlewareHandler } from 'hono';
import { API_SECURITY_HEADERS } from '../http/security-headers.ts';

/**
 * CORS for the data route. Written here rather than with `hono/cors` because the answer depends
 * on the origin in a way that middleware cannot express (its `credentials` flag is fixed):
 * allowlisted origins get their origin echoed with credentials (so session cookies reach a
 * session-bound chart), while `'*'` lets any other origin read public data without credentials.
 * Unlisted origins get no CORS headers at all, so the browser withholds the answer.
 */
export function dataCors(allowedOrigins: readonly string[]): MiddlewareHandler {
  const exact = new Set(allowedOrigins.filter((o) => o !== '*'));
  const anyOrigin = allowedOrigins.includes('*');

  function grant(origin: string | undefined): Record<string, string> | null {
    if (!origin) return null;
    if (exact.has(origin)) {
      return {
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Credentials': 'true',
      };
    }
    return anyOrigin ? { 'Access-Control-Allow-Origin': '*' } : null;
  }

  return async function dataCorsMiddleware(c, next) {
    const origin = c.req.header('origin');
    const granted = grant(origin);
    if (c.req.method === 'OPTIONS') {
      const headers: Record<string, string> = {
        ...API_SECURITY_HEADERS,
        Vary: 'Origin',
        ...(granted ?? {}),
      };
      if (granted) {
        headers['Access-Control-Allow-Methods'] = 'GET';
        headers['Access-Control-Allow-Headers'] = 'Authorization, If-None-Match';
        headers['Access-Control-Max-Age'] = '600';
      }
      return new Response(null, { status: 204, headers });
    }
    await next();
    // The answer differs by origin from here on, so shared caches must key on it.
    c.res.headers.append('Vary', 'Origin');
    if (granted) {
      for (const [name, value] of Object.entries(granted)) c.res.headers.set(name, value);
      c.res.headers.set('Access-Control-Expose-Headers', 'ETag, Retry-After');
    }
  };
}
