/**
 * Builds compact JWTs by hand with Node's own crypto: an implementation independent of the edge's
 * signer, for well-formed ids and for every kind of forgery the tests try.
 */
import { createHmac } from 'node:crypto';

export function b64url(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return Buffer.from(text).toString('base64url');
}

/** An HS256/384/512 token signed with `secret` (or an unsigned one for `alg: none`). */
export function forgeToken(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  secret: string | null,
): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  if (secret === null) return `${input}.`;
  const hash =
    { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' }[String(header.alg)] ?? 'sha256';
  return `${input}.${createHmac(hash, secret).update(input).digest('base64url')}`;
}

/** Claims of a valid public id for the registry query `name`, `ttl` seconds from now. */
export function publicClaims(name: string, ttl = 600, extra: Record<string, unknown> = {}) {
  const now = Math.floor(Date.now() / 1000);
  return {
    q: name,
    pub: true,
    iat: now,
    exp: now + ttl,
    jti: `jti-${Math.random().toString(36).slice(2)}`,
    ...extra,
  };
}

/** Splits a token into its three parts. */
export function parts(token: string): [string, string, string] {
  const [h = '', p = '', s = ''] = token.split('.');
  return [h, p, s];
}

/**
 * An embed page's ticket built by hand, as the edge documents it: `<kid>~<exp base 36>~<nonce>~<mac>`
 * with the MAC an HMAC-SHA-256 over the label, kid, expiry, nonce, the id's jti and the address.
 */
export function forgeTicket(
  kid: string,
  secret: string,
  fields: { exp: number; jti: string; address: string; nonce?: string },
): string {
  const nonce = fields.nonce ?? 'forged-nonce';
  const input = `analytics-edge embed ticket v1\n${kid}\n${fields.exp}\n${nonce}\n${fields.jti}\n${fields.address}`;
  const mac = createHmac('sha256', secret).update(input).digest('base64url');
  return [kid, fields.exp.toString(36), nonce, mac].join('~');
}
