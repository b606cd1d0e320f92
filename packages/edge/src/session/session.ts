import type { Context } from 'hono';

declare module 'hono' {
  interface ContextVariableMap {
    /**
     * Set by the data route: this request's `Authorization: Bearer` holds a query id, not a
     * session token, so session hooks must not read it as one.
     */
    analyticsBearerIsQueryId: boolean;
  }
}

/**
 * The signed-in viewer as the host app knows them: a stable subject (user id) and, in
 * multi-tenant apps, the tenant. Other fields may feed `{from: 'session', claim}` parameters.
 */
export interface Session {
  subject: string;
  tenant?: string | number;
  [claim: string]: unknown;
}

/**
 * The session hook: reads the request (cookie, header) and answers the session, or null when
 * nobody is signed in. Throwing means the session could not be checked (the edge answers 502).
 */
export type Authorize = (c: Context) => Session | null | Promise<Session | null>;

/** Reads a cookie from a `Cookie` header without a cookie library; null when absent. */
export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      const raw = part.slice(eq + 1).trim();
      try {
        return decodeURIComponent(raw.startsWith('"') ? raw.slice(1, -1) : raw);
      } catch {
        return raw;
      }
    }
  }
  return null;
}
