/**
 * Compact JWTs built by hand with Node's own crypto, independent of the edge's signer: valid
 * query ids and session cookies for the items, and every forgery the token attacks try.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';

/** base64url of a JSON value (or of a string's UTF-8 bytes). */
export function b64url(value: unknown): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString(
    'base64url',
  );
}

const HASHES: Record<string, string> = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' };

/** HMAC over `header.payload` with the hash the header's `alg` names (SHA-256 for others). */
export function hmac(input: string, secret: string, alg = 'HS256'): string {
  return createHmac(HASHES[alg] ?? 'sha256', secret)
    .update(input)
    .digest('base64url');
}

/** A token with this header and payload, signed with `secret` (`null`: an empty signature). */
export function forgeJwt(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  secret: string | null,
): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${secret === null ? '' : hmac(input, secret, String(header.alg))}`;
}

/** A signing key as `EDGE_SIGNING_KEYS` holds it. */
export interface TestKey {
  kid: string;
  secret: string;
}

/** A fresh signing key with a strong random secret. */
export function newKey(kid: string): TestKey {
  return { kid, secret: randomBytes(32).toString('base64url') };
}

/** `EDGE_SIGNING_KEYS` for these keys, current first. */
export function keysEnv(...keys: TestKey[]): string {
  return keys.map((k) => `${k.kid}:${k.secret}`).join(',');
}

const now = () => Math.floor(Date.now() / 1000);

/** A valid public query id for registry query `q` with locked parameters `p`. */
export function publicId(
  key: TestKey,
  q: string,
  p: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): string {
  return forgeJwt(
    { alg: 'HS256', typ: 'JWT', kid: key.kid },
    { q, p, pub: true, iat: now(), exp: now() + 3600, jti: randomUUID(), ...extra },
    key.secret,
  );
}

/** A valid session-bound query id for subject `sub`. */
export function sessionId(
  key: TestKey,
  q: string,
  sub: string,
  p: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): string {
  return forgeJwt(
    { alg: 'HS256', typ: 'JWT', kid: key.kid },
    { q, p, sub, iat: now(), exp: now() + 600, jti: randomUUID(), ...extra },
    key.secret,
  );
}

/** The host's session cookie value (`jwtSession`'s default claims) for a subject and tenant. */
export function sessionCookie(secret: string, sub: string, tenant: string, ttl = 3600): string {
  return `session=${forgeJwt({ alg: 'HS256', typ: 'JWT' }, { sub, tenant, iat: now(), exp: now() + ttl }, secret)}`;
}
