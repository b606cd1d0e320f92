/**
 * Signing keys: `kid` + secret pairs, the first one current (it signs), the others previous
 * (they still verify, so ids minted before a rotation keep working until they expire).
 */

/** One HMAC key with its id. The secret is used as UTF-8 bytes. */
export interface SigningKey {
  kid: string;
  secret: string;
}

/** Shortest secret accepted: 32 characters of a random base64url string carry 192 bits. */
export const MIN_SECRET_LENGTH = 32;

const KID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Parses keys as `EDGE_SIGNING_KEYS` holds them, `kid:secret,kid:secret` (current first), or as
 * JSON: `[{"kid":…,"secret":…}]` or `{"keys":[…]}`. Throws a sentence naming `source` on any
 * mistake; the sentence never repeats a secret.
 */
export function parseSigningKeys(text: string, source = 'EDGE_SIGNING_KEYS'): SigningKey[] {
  const trimmed = text.trim();
  if (!trimmed)
    throw new Error(`${source} is empty; run \`npx analytics-edge keygen\` to make a key`);
  let keys: SigningKey[];
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw new Error(`${source} looks like JSON but does not parse`);
    }
    const list = Array.isArray(parsed) ? parsed : (parsed as { keys?: unknown }).keys;
    if (!Array.isArray(list)) throw new Error(`${source}: expected a list of {kid, secret}`);
    keys = list.map((item, i) => {
      const { kid, secret } = (item ?? {}) as Record<string, unknown>;
      if (typeof kid !== 'string' || typeof secret !== 'string') {
        throw new Error(`${source}: key ${i + 1} needs a string kid and a string secret`);
      }
      return { kid, secret };
    });
  } else {
    keys = trimmed.split(',').map((pair, i) => {
      const colon = pair.indexOf(':');
      if (colon < 0) throw new Error(`${source}: key ${i + 1} is not written as kid:secret`);
      return { kid: pair.slice(0, colon).trim(), secret: pair.slice(colon + 1).trim() };
    });
  }
  checkSigningKeys(keys, source);
  return keys;
}

/**
 * Refuses a missing, malformed or weak key set: at least one key, well-formed unique kids,
 * secrets of at least {@link MIN_SECRET_LENGTH} characters that are not a repeated pattern.
 */
export function checkSigningKeys(keys: readonly SigningKey[], source = 'signingKeys'): void {
  if (keys.length === 0) {
    throw new Error(`${source} holds no key; run \`npx analytics-edge keygen\` to make one`);
  }
  const seen = new Set<string>();
  for (const [i, { kid, secret }] of keys.entries()) {
    if (!KID.test(kid)) {
      throw new Error(`${source}: key ${i + 1} has an invalid kid (use 1-64 of A-Z a-z 0-9 . _ -)`);
    }
    if (seen.has(kid)) throw new Error(`${source}: kid '${kid}' appears twice`);
    seen.add(kid);
    const problem = weakness(secret);
    if (problem) {
      throw new Error(
        `${source}: the secret of key '${kid}' is ${problem}; run \`npx analytics-edge keygen\` for a strong one`,
      );
    }
  }
}

function weakness(secret: string): string | null {
  if (typeof secret !== 'string' || secret.length === 0) return 'missing';
  if (secret.length < MIN_SECRET_LENGTH)
    return `too short (${secret.length} characters, at least ${MIN_SECRET_LENGTH} needed)`;
  if (new Set(secret).size < 10) return 'too repetitive to be random';
  if (/^(change.?me|replace.?me|secret|password|example)/i.test(secret))
    return 'a placeholder, not a random secret';
  return null;
}

/** Formats keys back into the `EDGE_SIGNING_KEYS` form. */
export function formatSigningKeys(keys: readonly SigningKey[]): string {
  return keys.map((k) => `${k.kid}:${k.secret}`).join(',');
}

/** A new key: a date-stamped kid and 32 random bytes as base64url (43 characters). */
export function generateSigningKey(now = new Date()): SigningKey {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const tag = Array.from(crypto.getRandomValues(new Uint8Array(2)), (b) =>
    b.toString(16).padStart(2, '0'),
  ).join('');
  return {
    kid: `k${now.toISOString().slice(0, 10).replaceAll('-', '')}-${tag}`,
    secret: base64Url(bytes),
  };
}

function base64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}
