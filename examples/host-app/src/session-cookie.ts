import { jwtSession, type Session } from '@analytics-chart/edge';
import type { Context } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import { sign } from 'hono/jwt';
import { TENANTS, type Tenant } from './dashboard-queries.ts';
import type { HostUser } from './users.ts';

/** The cookie holding the host's session: a JWT the edge verifies with the same secret. */
export const SESSION_COOKIE = 'session';

/** How the host signs and reads its session cookie. */
export interface SessionSettings {
  /** HMAC secret of the session JWT (at least 32 characters); the edge's `jwtSession` shares it. */
  secret: string;
  /** Session lifetime in seconds. @default 28800 (8 hours) */
  lifetimeSeconds?: number;
  /** Send the cookie over HTTPS only; on for every deployment that is not plain-HTTP localhost. */
  secure: boolean;
}

/**
 * Starts a session: a signed JWT `{sub, tenant, name, exp}` in an HttpOnly, SameSite=Lax cookie.
 * The tenant in it is what every chart's `tenant` parameter is filled from; the browser can read
 * neither the cookie nor change it without breaking the signature.
 */
export async function startSession(
  c: Context,
  user: HostUser,
  settings: SessionSettings,
): Promise<void> {
  const lifetime = settings.lifetimeSeconds ?? 8 * 3600;
  const now = Math.floor(Date.now() / 1000);
  const token = await sign(
    { sub: user.login, tenant: user.tenant, name: user.name, iat: now, exp: now + lifetime },
    settings.secret,
    'HS256',
  );
  setCookie(c, SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'Lax',
    secure: settings.secure,
    path: '/',
    maxAge: lifetime,
  });
}

/** Ends the session by expiring the cookie. */
export function endSession(c: Context, settings: SessionSettings): void {
  deleteCookie(c, SESSION_COOKIE, { path: '/', secure: settings.secure, httpOnly: true });
}

/**
 * The session check shared by the host's pages and the edge: the edge's own `jwtSession`, reading
 * the host's cookie. One verifier, so a page and the charts on it can never disagree on who is
 * signed in or in which tenant.
 */
export function sessionReader(settings: SessionSettings) {
  return jwtSession({ secret: settings.secret, cookie: SESSION_COOKIE });
}

/** The signed-in user of a verified session, or null when the session lacks a known shape. */
export function userOf(session: Session | null): HostUser | null {
  const tenant = session?.tenant;
  if (!session || !TENANTS.includes(tenant as Tenant)) return null;
  return {
    login: session.subject,
    name: typeof session.name === 'string' ? session.name : session.subject,
    tenant: tenant as Tenant,
  };
}
