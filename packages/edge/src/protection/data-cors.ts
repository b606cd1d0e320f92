import { API_SECURITY_HEADERS } from '../http/security-headers.ts';

/** The data route's CORS answers, one frozen set of headers per kind of origin. */
export interface DataCors {
  /**
   * Headers every answer of the data route carries for a request from `origin` (success, 304
   * and refusal alike, so a cross-origin widget can read an `expired` and renew): `Vary: Origin`
   * always, and the grant when the origin has one.
   */
  headersFor(origin: string | undefined): Readonly<Record<string, string>>;
  /** The answer to a preflight from `origin`. */
  preflight(origin: string | undefined): Response;
}

/**
 * CORS for the data route: allowlisted origins get their origin echoed with credentials (so
 * session cookies reach a session-bound chart), `'*'` lets any other origin read public data
 * without credentials, and unlisted origins get no CORS headers, so the browser withholds the
 * answer. Not `hono/cors`, whose `credentials` flag cannot depend on the origin.
 *
 * The route builds these headers into its answers instead of a middleware setting them
 * afterwards, because on Node a changed response turns `@hono/node-server`'s light response
 * into a full one.
 */
export function dataCors(allowedOrigins: readonly string[]): DataCors {
  // The answer differs by origin, so shared caches must key on it.
  const none: Readonly<Record<string, string>> = Object.freeze({ Vary: 'Origin' });
  const grant = (origin: string, credentials: boolean): Grant => {
    const allow = {
      'Access-Control-Allow-Origin': origin,
      ...(credentials ? { 'Access-Control-Allow-Credentials': 'true' } : {}),
    };
    return {
      allow,
      headers: Object.freeze({
        ...none,
        ...allow,
        'Access-Control-Expose-Headers': 'ETag, Retry-After',
      }),
    };
  };
  const exact = new Map(
    allowedOrigins.filter((o) => o !== '*').map((origin) => [origin, grant(origin, true)]),
  );
  const any = allowedOrigins.includes('*') ? grant('*', false) : undefined;
  const granted = (origin: string | undefined) => (origin ? (exact.get(origin) ?? any) : undefined);

  return {
    headersFor: (origin) => granted(origin)?.headers ?? none,
    preflight(origin) {
      const g = granted(origin);
      const headers = g
        ? {
            ...API_SECURITY_HEADERS,
            ...none,
            ...g.allow,
            'Access-Control-Allow-Methods': 'GET',
            'Access-Control-Allow-Headers': 'Authorization, If-None-Match',
            'Access-Control-Max-Age': '600',
          }
        : { ...API_SECURITY_HEADERS, ...none };
      return new Response(null, { status: 204, headers });
    },
  };
}

/** What an allowed origin is granted: the preflight's allowance, and every answer's headers. */
interface Grant {
  allow: Readonly<Record<string, string>>;
  headers: Readonly<Record<string, string>>;
}

/**
 * CORS of the embed page's own data route. The page asks it same-origin (no CORS needed) unless
 * it sits in a sandboxed frame, whose origin is `null`: that one is granted reading without
 * credentials, every other origin nothing. The admission steps decide who gets data.
 */
export function framedDataCors(): DataCors {
  const sandboxed = dataCors(['*']);
  const others = dataCors([]);
  const pick = (origin: string | undefined) => (origin === 'null' ? sandboxed : others);
  return {
    headersFor: (origin) => pick(origin).headersFor(origin),
    preflight: (origin) => pick(origin).preflight(origin),
  };
}
