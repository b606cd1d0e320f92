import { encodeBase64Url } from 'hono/utils/encode';
import { type Keyring, QUERY_ID_ALG } from './keyring.ts';
import type { QueryIdClaims } from './query-id-claims.ts';

const encoder = new TextEncoder();

function encodePart(value: unknown): string {
  return base64UrlNoPad(encoder.encode(JSON.stringify(value)));
}

function base64UrlNoPad(bytes: Uint8Array | ArrayBuffer): string {
  const buffer = bytes instanceof Uint8Array ? bytes.slice().buffer : bytes;
  return encodeBase64Url(buffer).replace(/=+$/, '');
}

/**
 * Signs claims into a compact JWT with the keyring's current key: header
 * `{"alg":"HS256","typ":"JWT","kid":…}`. Written here rather than with `hono/jwt`'s `sign`
 * because that one only writes a `kid` for JWK keys and re-imports the key on every call.
 */
export async function signClaims(claims: QueryIdClaims, keyring: Keyring): Promise<string> {
  const kid = keyring.currentKid;
  const key = keyring.get(kid);
  if (!key) throw new Error('no current signing key');
  const input = `${encodePart({ alg: QUERY_ID_ALG, typ: 'JWT', kid })}.${encodePart(claims)}`;
  const signature = await crypto.subtle.sign('HMAC', await key, encoder.encode(input));
  return `${input}.${base64UrlNoPad(signature)}`;
}

/** A random `jti`: 16 bytes as base64url (22 characters). */
export function newJti(): string {
  return base64UrlNoPad(crypto.getRandomValues(new Uint8Array(16)));
}
