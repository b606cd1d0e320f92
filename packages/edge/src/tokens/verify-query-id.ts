import { verify } from 'hono/jwt';
import { decodeHeader } from 'hono/utils/jwt/jwt';
import { type Keyring, QUERY_ID_ALG } from './keyring.ts';
import { parseQueryIdClaims, type QueryIdClaims } from './query-id-claims.ts';

/** Options of {@link verifyQueryId}. */
export interface VerifyOptions {
  /** Current time in Unix seconds. */
  now: number;
  /** Tolerated clock difference for `nbf` and `iat`, in seconds. */
  skewSeconds: number;
  /** Longest id accepted, in characters. */
  maxLength: number;
  /** Accept ids expired at most this long ago (renewal); 0 on the data route. */
  acceptExpiredFor?: number;
}

/** A verified id: its claims, the kid that verified it, and whether it is past `exp`. */
export interface VerifiedQueryId {
  ok: true;
  claims: QueryIdClaims;
  kid: string;
  expired: boolean;
}

/** A refused id: `expired` only when the signature is good and the id is merely too old. */
export interface RefusedQueryId {
  ok: false;
  code: 'invalid' | 'expired';
  /** For the operator's log; the viewer gets a fixed sentence. */
  reason: string;
  /** The jti when the signature was good (expired ids), for logs. */
  jti?: string;
}

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * Whether a part is canonical base64url: the alphabet only, no padding, no length that leaves a
 * lone character, and the bits of the last character beyond the data all zero. Each byte string
 * then has exactly one accepted spelling, so no two ids differ in text but not in meaning.
 */
export function isCanonicalBase64Url(part: string): boolean {
  if (!/^[A-Za-z0-9_-]*$/.test(part)) return false;
  const tail = part.length % 4;
  if (tail === 1) return false;
  if (tail === 0) return true;
  const last = ALPHABET.indexOf(part.charAt(part.length - 1));
  // Two characters carry 12 bits for one byte (4 unused), three carry 18 for two (2 unused).
  return (last & (tail === 2 ? 0b1111 : 0b11)) === 0;
}

/**
 * Verifies a signed query id. Order matters: shape (three canonical base64url parts), then header (`kid` known, `alg` exactly
 * HS256, so `none` and algorithm switches fail), then the signature with WebCrypto's
 * constant-time `crypto.subtle.verify` (through `hono/jwt`'s `verify`, given the imported key and
 * the pinned algorithm), and only then the claims and the clock. A tampered id is therefore
 * `invalid` even when it is also expired, and an attacker learns nothing from timing or wording.
 */
export async function verifyQueryId(
  token: string,
  keyring: Keyring,
  options: VerifyOptions,
): Promise<VerifiedQueryId | RefusedQueryId> {
  if (token.length > options.maxLength) return refuse(`longer than ${options.maxLength}`);
  if (!COMPACT_JWS.test(token)) return refuse('not a compact JWS');
  if (!token.split('.').every(isCanonicalBase64Url)) return refuse('not canonical base64url');
  let header: { alg?: unknown; kid?: unknown };
  try {
    header = decodeHeader(token) as typeof header;
  } catch {
    return refuse('header does not decode');
  }
  if (header.alg !== QUERY_ID_ALG) return refuse(`alg ${String(header.alg).slice(0, 10)}`);
  if (typeof header.kid !== 'string') return refuse('no kid');
  const key = keyring.get(header.kid);
  if (!key) return refuse(`unknown kid ${header.kid.slice(0, 64)}`);
  let payload: unknown;
  try {
    payload = await verify(token, await key, {
      alg: QUERY_ID_ALG,
      exp: false,
      nbf: false,
      iat: false,
    });
  } catch (error) {
    return refuse((error as Error).name || 'signature');
  }
  const parsed = parseQueryIdClaims(payload);
  if (!parsed.ok) return refuse(`claims: ${parsed.error}`);
  const { claims } = parsed;
  const { now, skewSeconds } = options;
  if (claims.nbf !== undefined && claims.nbf > now + skewSeconds) return refuse('not yet valid');
  if (claims.iat > now + skewSeconds) return refuse('issued in the future');
  const expired = claims.exp <= now;
  if (expired && now - claims.exp >= (options.acceptExpiredFor ?? 0)) {
    return { ok: false, code: 'expired', reason: 'expired', jti: claims.jti };
  }
  return { ok: true, claims, kid: header.kid, expired };
}

function refuse(reason: string): RefusedQueryId {
  return { ok: false, code: 'invalid', reason };
}
