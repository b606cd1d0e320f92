import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Keyring } from '../src/tokens/keyring.ts';
import type { QueryIdClaims } from '../src/tokens/query-id-claims.ts';
import { signClaims } from '../src/tokens/sign-query-id.ts';
import { verifyQueryId } from '../src/tokens/verify-query-id.ts';

/** The id specification's test vectors (docs/query-id.md), checked in TypeScript, Python and Go. */

const root = fileURLToPath(new URL('../../../', import.meta.url));
interface Vectors {
  keys: { kid: string; secret: string }[];
  now: number;
  valid: { name: string; kid: string; header: string; payload: string; token: string }[];
  invalid: { name: string; token: string; layer: 'signature' | 'claims' }[];
}
const vectors: Vectors = JSON.parse(readFileSync(`${root}docs/query-id/vectors.json`, 'utf8'));
const options = { now: vectors.now, skewSeconds: 30, maxLength: 8192 };
// Debian's interpreter, where python3-jwt installs PyJWT (a pyenv python3 on PATH would lack it).
const PYTHON = process.env.PYTHON_WITH_PYJWT ?? '/usr/bin/python3';
// Debian's golang-go (.ci/run installs it); GO overrides.
const GO = process.env.GO ?? 'go';

/**
 * What another language's check reports: no failure against the vectors, and a session-bound and
 * a public id it minted with the documented function, which the edge verifies with their claims.
 */
async function expectReport(report: {
  failures: string[];
  minted: { session: string; public: string };
}): Promise<void> {
  expect(report.failures).toEqual([]);
  const keyring = new Keyring(vectors.keys);
  const session = await verifyQueryId(report.minted.session, keyring, options);
  expect(session).toMatchObject({
    ok: true,
    claims: { q: 'dashboard-signups', p: { tenant: 'acme' }, sub: 'alice@acme', r: '7d' },
  });
  expect(session.ok && session.claims.exp - session.claims.iat).toBe(600);
  const published = await verifyQueryId(report.minted.public, keyring, options);
  expect(published).toMatchObject({
    ok: true,
    claims: { q: 'public-events', pub: true, aud: ['https://blog.example.com'] },
  });
  expect(published.ok && published.claims.exp - published.claims.iat).toBe(30 * 86400);
}

describe('query id test vectors', () => {
  it('the edge signs each valid vector to exactly its token, and verifies it', async () => {
    for (const vector of vectors.valid) {
      const key = vectors.keys.find((k) => k.kid === vector.kid);
      if (!key) throw new Error(`vector ${vector.name} names an unknown kid`);
      // A keyring whose current key is the vector's key: the signer writes that kid.
      const signer = new Keyring([key]);
      const claims = JSON.parse(vector.payload) as QueryIdClaims;
      expect(await signClaims(claims, signer), vector.name).toBe(vector.token);
      const outcome = await verifyQueryId(vector.token, new Keyring(vectors.keys), options);
      expect(outcome, vector.name).toMatchObject({ ok: true, kid: vector.kid, claims });
    }
  });

  it('the edge refuses each invalid vector as invalid', async () => {
    for (const vector of vectors.invalid) {
      const outcome = await verifyQueryId(vector.token, new Keyring(vectors.keys), options);
      expect(outcome.ok ? 'accepted' : outcome.code, vector.name).toBe('invalid');
    }
  });

  it('a vector is refused once its key is rotated out', async () => {
    const rotated = new Keyring([vectors.keys[0] as Vectors['keys'][number]]);
    const old = vectors.valid.find((v) => v.kid !== vectors.keys[0]?.kid);
    expect(old).toBeDefined();
    const outcome = await verifyQueryId(old?.token ?? '', rotated, options);
    expect(outcome.ok).toBe(false);
  });

  it('PyJWT and a hand-computed HMAC agree with the vectors, and ids minted in Python verify here', async () => {
    const out = execFileSync(
      PYTHON,
      [fileURLToPath(new URL('./python/check_query_id_vectors.py', import.meta.url)), root],
      { encoding: 'utf8' },
    );
    await expectReport(JSON.parse(out));
  });

  it("Go's own HMAC agrees with the vectors, and ids minted by the Go file verify here", async () => {
    // The documented file as a user copies it: a package of its own in their module.
    const dir = mkdtempSync(join(tmpdir(), 'query-id-go-'));
    try {
      mkdirSync(join(dir, 'queryid'));
      copyFileSync(`${root}docs/query-id/mint_query_id.go`, join(dir, 'queryid/mint_query_id.go'));
      copyFileSync(
        fileURLToPath(new URL('./go/check_query_id_vectors.go', import.meta.url)),
        join(dir, 'main.go'),
      );
      writeFileSync(join(dir, 'go.mod'), 'module querycheck\n\ngo 1.19\n');
      // The standard library only: nothing is fetched. One build cache for every run (the
      // consumer suite's Go host shares it), so the standard library is compiled once per machine.
      const env = {
        ...process.env,
        GOCACHE: process.env.GOCACHE ?? join(tmpdir(), 'analytics-chart-go-cache'),
        GOPROXY: 'off',
        GOFLAGS: '-mod=mod',
      };
      const out = execFileSync(GO, ['run', '.', root], { cwd: dir, encoding: 'utf8', env });
      await expectReport(JSON.parse(out));
      // go vet finds nothing to report in either file (it exits non-zero when it does).
      execFileSync(GO, ['vet', './...'], { cwd: dir, encoding: 'utf8', env, stdio: 'pipe' });
      // What users copy is formatted as Go code is: gofmt lists no file it would change.
      const goroot = execFileSync(GO, ['env', 'GOROOT'], { encoding: 'utf8' }).trim();
      const files = [join(dir, 'queryid/mint_query_id.go'), join(dir, 'main.go')];
      expect(execFileSync(join(goroot, 'bin/gofmt'), ['-l', ...files], { encoding: 'utf8' })).toBe(
        '',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
