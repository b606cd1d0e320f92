import { describe, expect, it } from 'vitest';
import { Keyring } from '../src/tokens/keyring.ts';
import { signClaims } from '../src/tokens/sign-query-id.ts';
import { isCanonicalBase64Url, verifyQueryId } from '../src/tokens/verify-query-id.ts';
import { b64url, forgeToken, parts, publicClaims } from './support/forge.ts';

const current = { kid: 'k2', secret: 'Zm9vYmFyYmF6cXV4LWN1cnJlbnQta2V5LTAxMjM0NTY3' };
const previous = { kid: 'k1', secret: 'cHJldmlvdXMta2V5LXNlY3JldC0wMTIzNDU2Nzg5YWJj' };
const stranger = { kid: 'k2', secret: 'c3RyYW5nZXJzLWtleS1zZWNyZXQtMDEyMzQ1Njc4OWFi' };
const keyring = new Keyring([current, previous]);
const now = () => Math.floor(Date.now() / 1000);
const options = () => ({ now: now(), skewSeconds: 30, maxLength: 8192 });
const header = (kid = 'k2', alg = 'HS256') => ({ alg, typ: 'JWT', kid });

async function refusal(
  token: string,
  extra: Partial<ReturnType<typeof options>> & { acceptExpiredFor?: number } = {},
) {
  const outcome = await verifyQueryId(token, keyring, { ...options(), ...extra });
  return outcome.ok ? 'accepted' : outcome.code;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Every other spelling of a part's bytes: its last character with unused bits set. */
function otherSpellings(part: string): string[] {
  const unused = [0, 0, 0b1111, 0b11][part.length % 4] ?? 0;
  const last = ALPHABET.indexOf(part.charAt(part.length - 1));
  const out: string[] = [];
  for (let bits = 1; bits <= unused; bits++) {
    if ((bits & unused) === bits) out.push(`${part.slice(0, -1)}${ALPHABET[last | bits]}`);
  }
  return out;
}

describe('canonical base64url', () => {
  it('accepts what Node encodes and refuses padding, other alphabets and set unused bits', () => {
    for (let n = 0; n < 40; n++) {
      const bytes = Buffer.from(Array.from({ length: n }, (_, i) => (i * 37 + n * 11) % 256));
      const canonical = bytes.toString('base64url');
      expect(isCanonicalBase64Url(canonical)).toBe(true);
      for (const other of otherSpellings(canonical)) {
        // Node's lenient decoder reads the same bytes: only the spelling differs.
        expect(Buffer.from(other, 'base64url').equals(bytes)).toBe(true);
        expect(isCanonicalBase64Url(other)).toBe(false);
      }
      if (n % 3 !== 0) expect(isCanonicalBase64Url(bytes.toString('base64'))).toBe(false);
    }
    expect(isCanonicalBase64Url('QQ+/')).toBe(false);
    expect(isCanonicalBase64Url('QUJDR')).toBe(false);
  });

  it('refuses an id whose header, payload or signature is spelled another way', async () => {
    // Claims of several lengths, so that each part has unused bits in some of them.
    let refusedParts = 0;
    for (let pad = 0; pad < 4; pad++) {
      const claims = publicClaims('daily', 600, { jti: `jti-${'x'.repeat(pad)}` });
      const token = forgeToken(header(), claims, current.secret);
      expect(await refusal(token)).toBe('accepted');
      const split = parts(token);
      for (const [i, part] of split.entries()) {
        for (const other of otherSpellings(part)) {
          const variant = split.map((p, j) => (j === i ? other : p)).join('.');
          expect(await refusal(variant)).toBe('invalid');
          refusedParts |= 1 << i;
        }
        expect(await refusal(split.map((p, j) => (j === i ? `${p}=` : p)).join('.'))).toBe(
          'invalid',
        );
      }
    }
    // The signature (43 characters) always has unused bits; the header and payload did too.
    expect(refusedParts).toBe(0b111);
  });
});

describe('verifyQueryId', () => {
  it('accepts an id signed by the edge with the current key, and one by an independent HMAC', async () => {
    const claims = publicClaims('daily');
    const own = await signClaims(claims, keyring);
    const outcome = await verifyQueryId(own, keyring, options());
    expect(outcome).toMatchObject({
      ok: true,
      kid: 'k2',
      expired: false,
      claims: { q: 'daily', pub: true },
    });
    // The edge's signer and Node's HMAC produce the same token byte for byte.
    expect(own).toBe(forgeToken(header(), claims, current.secret));
  });

  it('accepts ids of the previous key, refuses them once that key is removed', async () => {
    const token = forgeToken(header('k1'), publicClaims('daily'), previous.secret);
    expect(await refusal(token)).toBe('accepted');
    const rotated = new Keyring([current]);
    const outcome = await verifyQueryId(token, rotated, options());
    expect(outcome).toMatchObject({ ok: false, code: 'invalid' });
  });

  it('refuses a tampered payload', async () => {
    const token = forgeToken(header(), publicClaims('daily'), current.secret);
    const [h, , s] = parts(token);
    const tampered = `${h}.${b64url(publicClaims('admin-report'))}.${s}`;
    expect(await refusal(tampered)).toBe('invalid');
    // Even one flipped character of the payload.
    const [, p] = parts(token);
    const flipped = `${h}.${p.slice(0, -2)}${p.at(-2) === 'A' ? 'B' : 'A'}${p.at(-1)}.${s}`;
    expect(await refusal(flipped)).toBe('invalid');
  });

  it('refuses a signature swapped in from another valid id', async () => {
    const a = forgeToken(header(), publicClaims('daily'), current.secret);
    const b = forgeToken(header(), publicClaims('weekly'), current.secret);
    const [h, p] = parts(a);
    const [, , sb] = parts(b);
    expect(await refusal(`${h}.${p}.${sb}`)).toBe('invalid');
  });

  it('refuses alg none, with or without a signature', async () => {
    const claims = publicClaims('daily');
    expect(await refusal(forgeToken({ alg: 'none', typ: 'JWT', kid: 'k2' }, claims, null))).toBe(
      'invalid',
    );
    const signed = forgeToken(header(), claims, current.secret);
    const [, p, s] = parts(signed);
    expect(await refusal(`${b64url({ alg: 'none', kid: 'k2' })}.${p}.${s}`)).toBe('invalid');
    expect(await refusal(`${b64url({ alg: 'None', kid: 'k2' })}.${p}.`)).toBe('invalid');
  });

  it('refuses algorithm switches: HS512 with the right secret, RS256 headers (key confusion)', async () => {
    const claims = publicClaims('daily');
    expect(await refusal(forgeToken(header('k2', 'HS512'), claims, current.secret))).toBe(
      'invalid',
    );
    expect(await refusal(forgeToken(header('k2', 'HS384'), claims, current.secret))).toBe(
      'invalid',
    );
    // Classic confusion: an RS256 header with an "HMAC" over the key material as secret.
    const [, p, s] = parts(forgeToken(header(), claims, current.secret));
    expect(await refusal(`${b64url(header('k2', 'RS256'))}.${p}.${s}`)).toBe('invalid');
    expect(await refusal(`${b64url(header('k2', 'ES256'))}.${p}.${s}`)).toBe('invalid');
  });

  it('refuses a wrong, unknown or missing kid', async () => {
    const claims = publicClaims('daily');
    // Signed with another party's secret under our kid.
    expect(await refusal(forgeToken(header(), claims, stranger.secret))).toBe('invalid');
    // A kid we never had, signed with our own current secret.
    expect(await refusal(forgeToken(header('k9'), claims, current.secret))).toBe('invalid');
    // The right signature under the previous key's kid (kid swap).
    expect(await refusal(forgeToken(header('k1'), claims, current.secret))).toBe('invalid');
    expect(await refusal(forgeToken({ alg: 'HS256', typ: 'JWT' }, claims, current.secret))).toBe(
      'invalid',
    );
  });

  it('says expired for a good id past exp, but invalid for a tampered expired one', async () => {
    const t = now();
    const old = publicClaims('daily', 600, { iat: t - 1000, exp: t - 10 });
    const token = forgeToken(header(), old, current.secret);
    expect(await refusal(token)).toBe('expired');
    expect(await refusal(forgeToken(header(), old, stranger.secret))).toBe('invalid');
    expect(await refusal(forgeToken(header(), { ...old, exp: t }, current.secret))).toBe('expired');
  });

  it('accepts an expired id within the renewal grace and refuses it after', async () => {
    const t = now();
    const token = forgeToken(
      header(),
      publicClaims('daily', 600, { iat: t - 4000, exp: t - 3000 }),
      current.secret,
    );
    const within = await verifyQueryId(token, keyring, { ...options(), acceptExpiredFor: 3600 });
    expect(within).toMatchObject({ ok: true, expired: true });
    expect(await refusal(token, { acceptExpiredFor: 60 })).toBe('expired');
  });

  it('refuses ids not valid yet (nbf) or issued in the future, beyond the clock skew', async () => {
    const t = now();
    expect(
      await refusal(
        forgeToken(header(), publicClaims('daily', 600, { nbf: t + 300 }), current.secret),
      ),
    ).toBe('invalid');
    expect(
      await refusal(
        forgeToken(header(), publicClaims('daily', 600, { iat: t + 300 }), current.secret),
      ),
    ).toBe('invalid');
    expect(
      await refusal(
        forgeToken(header(), publicClaims('daily', 600, { nbf: t + 5 }), current.secret),
      ),
    ).toBe('accepted');
  });

  it('refuses claims the protocol rejects, even when signed', async () => {
    const t = now();
    const cases = [
      { q: 'a', d: { query: {} }, pub: true, iat: t, exp: t + 60, jti: 'x' },
      { q: 'a', iat: t, exp: t + 60, jti: 'x' },
      { q: 'a', pub: true, iat: t, exp: 'later', jti: 'x' },
      { q: 'a', pub: true, iat: t, exp: t + 60 },
      { q: 'a', pub: true, iat: t, exp: t + 60, jti: 'x', p: { tenant: { $ne: 1 } } },
    ];
    for (const claims of cases)
      expect(await refusal(forgeToken(header(), claims, current.secret))).toBe('invalid');
  });

  it('refuses malformed and oversized ids', async () => {
    const good = forgeToken(header(), publicClaims('daily'), current.secret);
    for (const bad of [
      '',
      'abc',
      'a.b',
      'a.b.c.d',
      `${good}.x`,
      `${good} `,
      `${good.slice(0, -1)}=`,
      'ä.b.c',
    ]) {
      expect(await refusal(bad)).toBe('invalid');
    }
    const [h, p, s] = parts(good);
    expect(await refusal(`${h}.${p}${'A'.repeat(9000)}.${s}`)).toBe('invalid');
    expect(await refusal(`${b64url('not json')}.${p}.${s}`)).toBe('invalid');
    expect(await refusal(`${h}.${b64url('[1,2]')}.${s}`)).toBe('invalid');
  });
});
