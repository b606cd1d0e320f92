import { checkSigningKeys, type SigningKey } from './signing-keys.ts';

/** The one algorithm the edge signs and accepts; pinned so a token cannot choose another. */
export const QUERY_ID_ALG = 'HS256';

const HMAC = { name: 'HMAC', hash: 'SHA-256' } as const;

/** An imported WebCrypto HMAC key. */
export type HmacKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/**
 * The signing keys as imported WebCrypto keys, looked up by `kid`. Importing happens once per
 * key (lazily, because WebCrypto import is async) and the secrets are not kept as strings
 * beyond this object. `replace` swaps the whole set at run time, for rotation without a restart.
 */
export class Keyring {
  #keys = new Map<string, Promise<HmacKey>>();
  #current = '';

  constructor(keys: readonly SigningKey[], source?: string) {
    this.replace(keys, source);
  }

  /** Replaces every key; the first is the new current key. */
  replace(keys: readonly SigningKey[], source = 'signingKeys'): void {
    checkSigningKeys(keys, source);
    const next = new Map<string, Promise<HmacKey>>();
    for (const { kid, secret } of keys) {
      next.set(
        kid,
        crypto.subtle.importKey('raw', new TextEncoder().encode(secret), HMAC, false, [
          'sign',
          'verify',
        ]),
      );
    }
    this.#keys = next;
    this.#current = keys[0]?.kid ?? '';
  }

  /** The kid new ids are signed with. */
  get currentKid(): string {
    return this.#current;
  }

  /** Whether a kid is (still) accepted. */
  has(kid: string): boolean {
    return this.#keys.has(kid);
  }

  /** The key for a kid, or undefined when the kid is unknown or was removed. */
  get(kid: string): Promise<HmacKey> | undefined {
    return this.#keys.get(kid);
  }
}
