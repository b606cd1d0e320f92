/**
 * Three `analytics-edge serve` processes (the compiled CLI, as installed) against one real redis-server (Debian's, AOF on): the
 * registry they share, a revocation reaching every replica within a second, the admin API's
 * refusals, the CLI's `ids` commands, and Redis killed and restarted during traffic.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type RedisServer, startRedis } from '@analytics-chart/test-kit/redis-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSigningKey } from '../src/tokens/signing-keys.ts';

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const key = generateSigningKey();

let dir: string;
let redis: RedisServer;
/** Public ids minted by the CLI while the replicas start: CLI runs are the slow part. */
let minted: Record<'listed' | 'toRevoke' | 'outage', { id: string; jti: string }>;
const replicas: { url: string; child: ChildProcess; log: () => string }[] = [];

function env(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    INIT_CWD: dir,
    EDGE_SIGNING_KEYS: `${key.kid}:${key.secret}`,
    EDGE_REDIS_URL: redis.url,
  };
}

async function cli(args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['dist/cli/main.js', ...args], {
      cwd: packageDir,
      env: env(),
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

function startReplica(): Promise<(typeof replicas)[number]> {
  const child = spawn(
    process.execPath,
    ['dist/cli/main.js', 'serve', '--config', 'analytics-edge.config.mjs', '--port', '0'],
    { cwd: packageDir, env: env() },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk;
  });
  child.stderr.on('data', (chunk: Buffer) => {
    out += chunk;
  });
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearInterval(timer);
        resolve({ url: m[1], child, log: () => out });
      }
    }, 20);
    child.once('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`exited ${code}: ${out}`));
    });
  });
}

const data = (url: string, id: string, user?: string) =>
  fetch(`${url}/api/data`, {
    headers: { authorization: `Bearer ${id}`, ...(user ? { 'x-user': user } : {}) },
    signal: AbortSignal.timeout(5000),
  });

const admin = (url: string, path: string, user: string | undefined, method = 'GET') =>
  fetch(`${url}/api/admin/ids${path}`, {
    method,
    headers: {
      ...(user ? { 'x-user': user } : {}),
      ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
    },
    signal: AbortSignal.timeout(5000),
  });

async function publicId(label: string): Promise<{ id: string; jti: string }> {
  const out = await cli(['sign', '--query', 'total', '--public', '--label', label]);
  expect(out.code, out.stderr).toBe(0);
  const id = /^(eyJ[\w-]+\.[\w-]+\.[\w-]+)$/m.exec(out.stdout)?.[1] ?? '';
  const jti = /jti ([\w-]+)\)/.exec(out.stdout)?.[1] ?? '';
  expect(out.stdout).toContain('Recorded in the shared registry');
  return { id, jti };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edge-replicas-'));
  writeFileSync(
    join(dir, 'analytics-edge.config.mjs'),
    `export default {
  queries: { total: { title: 'Total', query: { graph_type: 'Single Value', start: '1 day ago', end: 'now' } } },
  backend: { query: async () => ({ result: [{ value: 7 }], metadata: {} }) },
  authorize: (c) => { const user = c.req.header('x-user'); return user ? { subject: user } : null; },
  admin: (session) => session.subject === 'root',
  publicUrl: 'https://app.example.com/analytics',
  rateLimit: { perIp: { perSecond: 5000, burst: 5000 }, perId: { perSecond: 5000, burst: 5000 } },
  cache: { ttl: 0 },
};
`,
  );
  redis = await startRedis({ aof: true });
  const [listed, toRevoke, outage, ...started] = await Promise.all([
    publicId('Pricing page, Q3 "launch" & more'),
    publicId('to revoke'),
    publicId('outage'),
    startReplica(),
    startReplica(),
    startReplica(),
  ]);
  minted = { listed, toRevoke, outage } as typeof minted;
  replicas.push(...(started as (typeof replicas)[number][]));
}, 30_000);

afterAll(async () => {
  await Promise.all(
    replicas.map(
      (r) =>
        new Promise<void>((done) => {
          if (r.child.exitCode !== null) return done();
          r.child.once('exit', () => done());
          r.child.kill('SIGTERM');
        }),
    ),
  );
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('three replicas on one Redis', () => {
  let cliId: { id: string; jti: string };

  it('records ids minted by the CLI and by the sign API, listed on every replica for admins only', async () => {
    cliId = minted.listed;
    const [a, b, c] = replicas.map((r) => r.url) as [string, string, string];
    const signed = await fetch(`${b}/api/sign`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-user': 'ann' },
      body: JSON.stringify({ query: 'total', label: 'Ann’s dashboard' }),
    });
    expect(signed.status).toBe(200);

    for (const url of [a, b, c]) {
      const listed = await admin(url, '?limit=100', 'root');
      expect(listed.status).toBe(200);
      const page = (await listed.json()) as {
        items: { jti: string; mintedBy: string; label: string }[];
      };
      const mine = page.items.find((i) => i.jti === cliId.jti);
      expect(mine).toMatchObject({ mintedBy: 'cli', label: 'Pricing page, Q3 "launch" & more' });
      expect(page.items.some((i) => i.mintedBy === 'ann' && i.label === 'Ann’s dashboard')).toBe(
        true,
      );
    }
    const shown = await admin(c, `/${cliId.jti}`, 'root');
    expect(await shown.json()).toMatchObject({ jti: cliId.jti, query: 'total', public: true });

    // Not an admin, or not signed in: nothing listed.
    const denied = await admin(a, '', 'ann');
    expect(denied.status).toBe(403);
    const deniedText = await denied.text();
    expect(deniedText).not.toContain(cliId.jti);
    expect(JSON.parse(deniedText)).toEqual({ error: expect.any(String), code: 'forbidden' });
    expect((await admin(a, '', undefined)).status).toBe(401);
    expect((await admin(a, `/${cliId.jti}/revoke`, 'ann', 'POST')).status).toBe(403);
  }, 20_000);

  it("serve honours the config file's publicUrl: oEmbed answers and the embed page links it", async () => {
    const url = replicas[0]?.url as string;
    const embedUrl = `https://app.example.com/analytics/embed/${minted.listed.id}`;
    const oembed = await fetch(`${url}/oembed?url=${encodeURIComponent(embedUrl)}`);
    expect(oembed.status).toBe(200);
    expect(await oembed.json()).toMatchObject({
      type: 'rich',
      provider_url: expect.stringContaining('https://app.example.com'),
    });
    const page = await (await fetch(`${url}/embed/${minted.listed.id}`)).text();
    expect(page).toContain('application/json+oembed');
  });

  it('refuses hostile input with a JSON sentence and the right status', async () => {
    const a = replicas[0]?.url as string;
    // The CLI's refusal runs meanwhile: a CLI run is the slow part.
    const cliLabel = cli(['sign', '--query', 'total', '--public', '--label', '<b>x</b>']);
    for (const path of [
      '/..%2F..%2Fetc',
      `/${'x'.repeat(300)}`,
      '/%00abcdefgh',
      '/abc%0d%0aSet-Cookie:x',
    ]) {
      const res = await admin(a, path, 'root');
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.status, path).toBeLessThan(500);
      const body = (await res.json()) as { error: string };
      expect(body.error).toMatch(/^[A-Z][^\n]*\.$/);
      expect(JSON.stringify(body)).not.toMatch(/at .*\.ts|redis|Error:/);
    }
    for (const query of ['?limit=1000', '?limit=abc', '?cursor=-1', '?cursor=1e9', '?sort=x']) {
      const res = await admin(a, query, 'root');
      expect(res.status, query).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/\.$/);
    }
    for (const label of [
      '<img src=x onerror=alert(1)>',
      'line\nbreak',
      'bell\u0007',
      'rtl\u202Eexe',
      '',
    ]) {
      const res = await fetch(`${a}/api/sign`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-user': 'ann' },
        body: JSON.stringify({ query: 'total', label }),
      });
      expect(res.status, JSON.stringify(label)).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/label/);
    }
    const refused = await cliLabel;
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--label/);
  }, 20_000);

  it('pages through a long list without repeating or losing an id', async () => {
    const a = replicas[0]?.url as string;
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await admin(a, `?limit=1${cursor ? `&cursor=${cursor}` : ''}`, 'root');
      const page = (await res.json()) as { items: { jti: string }[]; next?: string };
      expect(page.items.length).toBeLessThanOrEqual(1);
      seen.push(...page.items.map((i) => i.jti));
      cursor = page.next;
      pages++;
    } while (cursor && pages < 50);
    const all = (await (await admin(a, '?limit=100', 'root')).json()) as {
      items: { jti: string }[];
    };
    expect(seen).toEqual(all.items.map((i) => i.jti));
    expect(seen.length).toBeGreaterThanOrEqual(2);
  });

  it('a revocation on one replica refuses the id on all three within a second, no restart', async () => {
    const { id, jti } = minted.toRevoke;
    const urls = replicas.map((r) => r.url);
    for (const url of urls) expect((await data(url, id)).status).toBe(200);
    const started = performance.now();
    const revoked = await admin(urls[0] as string, `/${jti}/revoke`, 'root', 'POST');
    expect(revoked.status).toBe(200);
    const refusedAfter = await Promise.all(
      urls.map(async (url) => {
        for (;;) {
          const res = await data(url, id);
          if (res.status === 401) return performance.now() - started;
          expect(res.status).toBe(200);
          if (performance.now() - started > 3000) return Number.POSITIVE_INFINITY;
          await new Promise((r) => setTimeout(r, 10));
        }
      }),
    );
    for (const ms of refusedAfter) expect(ms).toBeLessThan(1000);
    // The registry says so, with the views the replicas counted.
    await new Promise((r) => setTimeout(r, 1200));
    const shown = (await (await admin(urls[2] as string, `/${jti}`, 'root')).json()) as {
      revokedAt?: string;
      views: number;
      lastSeenAt?: string;
    };
    expect(shown.revokedAt).toMatch(/^\d{4}-/);
    expect(shown.views).toBeGreaterThanOrEqual(3);
    expect(shown.lastSeenAt).toMatch(/^\d{4}-/);
  }, 20_000);

  it('the CLI lists, shows and revokes what the replicas share', async () => {
    const [listed, shown, hostile] = await Promise.all([
      cli(['ids', 'list']),
      cli(['ids', 'show', cliId.jti]),
      cli(['ids', 'show', '../../etc']),
    ]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(cliId.jti);
    expect(listed.stdout).toContain('"Pricing page, Q3 "launch" & more"');
    expect(JSON.parse(shown.stdout)).toMatchObject({ jti: cliId.jti, mintedBy: 'cli' });
    expect(hostile.code).toBe(1);
    expect(hostile.stderr).toMatch(/needs a jti/);
    const url = replicas[1]?.url as string;
    expect((await data(url, cliId.id)).status).toBe(200);
    const started = performance.now();
    const revoked = await cli(['ids', 'revoke', cliId.jti]);
    expect(revoked.code, revoked.stderr).toBe(0);
    for (;;) {
      const status = (await data(url, cliId.id)).status;
      if (status === 401) break;
      expect(performance.now() - started).toBeLessThan(1000);
      await new Promise((r) => setTimeout(r, 10));
    }
  }, 20_000);

  it('Redis killed mid-traffic: checks fail closed within the timeout, one log line, then recover; revocations survive', async () => {
    const fresh = minted.outage;
    const revokedBefore = cliId;
    const urls = replicas.map((r) => r.url);
    // What each replica logged before the kill (a loaded machine may have had a slow moment).
    const logged = replicas.map((r) => r.log().length);
    await redis.kill();
    // Every request answers within the stated bound; once each replica notices, a 503.
    const statuses: number[] = [];
    const until = performance.now() + 2000;
    while (performance.now() < until) {
      const answers = await Promise.all(
        urls.map(async (url) => {
          const t = performance.now();
          const res = await data(url, fresh.id);
          expect(performance.now() - t).toBeLessThan(1000);
          if (res.status === 503) {
            expect(res.headers.get('retry-after')).toBe('1');
            expect(await res.json()).toEqual({
              error: 'This chart could not be checked; try again shortly.',
              code: 'backend',
            });
          }
          return res.status;
        }),
      );
      statuses.push(...answers);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(statuses.slice(-3)).toEqual([503, 503, 503]);
    expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
    // A revoked id stays refused (the copy in each process), never served.
    for (const url of urls) expect((await data(url, revokedBefore.id)).status).toBe(401);
    replicas.forEach((r, i) => {
      const since = r.log().slice(logged[i]);
      expect(since.match(/"event":"store.unavailable"/g)?.length).toBe(1);
      expect(r.log()).not.toMatch(/\n\s+at /);
    });

    await redis.restart();
    const recoveredAfter = await Promise.all(
      urls.map(async (url) => {
        const t = performance.now();
        for (;;) {
          if ((await data(url, fresh.id)).status === 200) return performance.now() - t;
          if (performance.now() - t > 5000) return Number.POSITIVE_INFINITY;
          await new Promise((r) => setTimeout(r, 50));
        }
      }),
    );
    for (const ms of recoveredAfter) expect(ms).toBeLessThan(5000);
    // The child's stdout may reach this process a moment after its answers do.
    await expect
      .poll(() => replicas.every((r) => r.log().includes('"event":"store.recovered"')), {
        timeout: 2000,
      })
      .toBe(true);
    // AOF kept the registry's record of the revocation through the crash.
    const shown = await admin(urls[1] as string, `/${revokedBefore.jti}`, 'root');
    expect(((await shown.json()) as { revokedAt?: string }).revokedAt).toMatch(/^\d{4}-/);
    for (const url of urls) expect((await data(url, revokedBefore.id)).status).toBe(401);
  }, 30_000);
});
