import type { Context } from 'hono';
import { EdgeError } from './edge-error.ts';
import { API_SECURITY_HEADERS } from './security-headers.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

/** A JSON answer with the API security headers; never cached unless headers say otherwise. */
export function jsonResponse(
  body: unknown,
  status = 200,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: {
      ...API_SECURITY_HEADERS,
      'Content-Type': JSON_TYPE,
      'Cache-Control': 'no-store',
      ...headers,
    },
  });
}

/**
 * The JSON body `{error, code}` of an edge failure, with `Retry-After` when it has one and any
 * `extra` headers (the data route's CORS).
 */
export function errorResponse(
  error: EdgeError,
  extra?: Readonly<Record<string, string>>,
): Response {
  const headers: Record<string, string> = { ...extra };
  if (error.retryAfter !== undefined) headers['Retry-After'] = String(error.retryAfter);
  return jsonResponse({ error: error.message, code: error.code }, error.status, headers);
}

/** The answer to any path or method the edge does not serve. */
export function notFoundResponse(): Response {
  return errorResponse(new EdgeError('not_found', 'There is nothing here.'));
}

/**
 * The answer to a method an address does not serve: 405 with the `Allow` header HTTP requires
 * (RFC 9110, 15.5.6), so that a developer who sends a POST where a GET belongs reads why.
 */
export function methodNotAllowedResponse(
  allow: string,
  extra?: Readonly<Record<string, string>>,
): Response {
  return errorResponse(
    new EdgeError('bad_request', `This address answers ${allow} only.`, { status: 405 }),
    { ...extra, Allow: allow },
  );
}

/** Whether an `If-None-Match` header matches an entity tag (weak comparison, as for GET). */
export function etagMatches(header: string, etag: string): boolean {
  const bare = etag.replace(/^W\//, '');
  for (const part of header.split(',')) {
    const tag = part.trim();
    if (tag === '*' || tag.replace(/^W\//, '') === bare) return true;
  }
  return false;
}

/** What each runtime's server hands Hono as `c.env`, as far as the client address goes. */
interface ServerEnv {
  /** `@hono/node-server`: the Node request. */
  incoming?: { socket?: { remoteAddress?: string } };
  /** `Bun.serve`: the server itself. */
  requestIP?: (request: Request) => { address?: string } | null;
  /** `Deno.serve`: the connection info. */
  remoteAddr?: { hostname?: string };
}

/**
 * The client address for per-IP limits when the config names no other source: the socket's peer
 * on Node, Bun and Deno, `cf-connecting-ip` on Workers. Duck-typed on what each server passes as
 * `c.env`, so the core imports no runtime's module; without it every client would share one
 * bucket.
 */
export function defaultClientIp(c: Context): string | undefined {
  const env = c.env as ServerEnv | undefined;
  return (
    env?.incoming?.socket?.remoteAddress ??
    (typeof env?.requestIP === 'function' ? env.requestIP(c.req.raw)?.address : undefined) ??
    env?.remoteAddr?.hostname ??
    c.req.header('cf-connecting-ip')
  );
}
