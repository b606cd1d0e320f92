import type { Context } from 'hono';
import { verify } from 'hono/jwt';
import type { SymmetricAlgorithm } from 'hono/utils/jwt/jwa';
import { Lru } from '../protection/lru.ts';
import { type Authorize, readCookie, type Session } from './session.ts';

/** Options of {@link jwtSession}. */
export interface JwtSessionOptions {
  /** The host's HMAC secret for its session JWTs (current first, then previous ones). */
  secret: string | readonly string[];
  /** The pinned algorithm. @default 'HS256' */
  alg?: SymmetricAlgorithm;
  /** Cookie holding the JWT. @default 'session' */
  cookie?: string | false;
  /**
   * Also accept `Authorization: Bearer <session JWT>`, for host servers calling the sign route.
   * On the data route that header carries the query id, so viewers' sessions come from the cookie.
   * @default true
   */
  header?: boolean;
  /** Claim holding the subject. @default 'sub' */
  subjectClaim?: string;
  /** Claim holding the tenant. @default 'tenant' */
  tenantClaim?: string;
  /** Required `iss`, when the host sets one. */
  issuer?: string;
  /** Required `aud`, when the host sets one. */
  audience?: string;
  /** Verified session tokens remembered until their expiry. @default 5000 */
  cacheSize?: number;
}

/**
 * A session hook that verifies the host's own session JWT (HS256 by default, from the `session`
 * cookie or a Bearer header) with `hono/jwt`. Tokens must carry `exp`. Verified tokens are
 * remembered until they expire, so repeated data requests skip the HMAC.
 *
 * @example
 * createEdge({ ..., authorize: jwtSession({ secret: process.env.SESSION_SECRET! }) })
 */
export function jwtSession(options: JwtSessionOptions): Authorize {
  const secrets = typeof options.secret === 'string' ? [options.secret] : [...options.secret];
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s.length < 32)) {
    throw new Error('jwtSession: each secret must be at least 32 characters');
  }
  const alg = options.alg ?? 'HS256';
  const cookie = options.cookie === undefined ? 'session' : options.cookie;
  const header = options.header ?? true;
  const subjectClaim = options.subjectClaim ?? 'sub';
  const tenantClaim = options.tenantClaim ?? 'tenant';
  const remembered = new Lru<string, { session: Session; exp: number }>(options.cacheSize ?? 5000);

  async function check(token: string): Promise<Session | null> {
    const now = Date.now() / 1000;
    const hit = remembered.get(token);
    if (hit) {
      if (hit.exp > now) return hit.session;
      remembered.delete(token);
      return null;
    }
    for (const secret of secrets) {
      try {
        const claims = await verify(token, secret, {
          alg,
          ...(options.issuer ? { iss: options.issuer } : {}),
          ...(options.audience ? { aud: options.audience } : {}),
        });
        const subject = claims[subjectClaim];
        if (typeof subject !== 'string' || subject === '' || typeof claims.exp !== 'number') {
          return null;
        }
        const session: Session = { ...claims, subject };
        const tenant = claims[tenantClaim];
        if (typeof tenant === 'string' || typeof tenant === 'number') session.tenant = tenant;
        else delete session.tenant;
        remembered.set(token, { session, exp: claims.exp });
        return session;
      } catch {
        // Try the next secret; after the last one the token is simply not a session.
      }
    }
    return null;
  }

  return async (c: Context) => {
    if (cookie) {
      const token = readCookie(c.req.header('cookie'), cookie);
      if (token) {
        const session = await check(token);
        if (session) return session;
      }
    }
    // On the data route the Bearer token is the query id: never try it as a session.
    if (header && !c.get('analyticsBearerIsQueryId')) {
      const auth = c.req.header('authorization');
      if (auth?.startsWith('Bearer ')) return check(auth.slice(7).trim());
    }
    return null;
  };
}
