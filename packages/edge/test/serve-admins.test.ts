/**
 * `analytics-edge serve --config x.json` with `admins.subjects`, run as the user runs it: a child
 * process reading a JSON file, its sessions checked by forwarding the cookie to a host session
 * endpoint on a real socket. A listed subject uses the admin API; another gets 403 and nothing
 * listed; nobody signed in gets 401.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSigningKey } from '../src/tokens/signing-keys.ts';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
let dir: string;
let sessions: Server;
let child: ChildProcess;
let url = '';
let output = '';

/** The host's session endpoint: `user=<name>` is signed in as `<name>`, anything else is 401. */
function startSessions(): Promise<Server> {
  const server = createServer((request, response) => {
    const user = /(?:^|;\s*)user=([a-z]{1,20})(?:;|$)/.exec(request.headers.cookie ?? '')?.[1];
    if (!user) {
      response.writeHead(401, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ subject: user }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edge-admins-'));
  sessions = await startSessions();
  const { port } = sessions.address() as AddressInfo;
  writeFileSync(
    join(dir, 'x.json'),
    JSON.stringify({
      queries: {
        total: {
          title: 'Total',
          query: { graph_type: 'Single Value', start: '1 day ago', end: 'now' },
        },
      },
      session: { url: `http://127.0.0.1:${port}/session` },
      admins: { subjects: ['root'] },
    }),
  );
  const key = generateSigningKey();
  child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--config', 'x.json', '--port', '0'],
    {
      cwd: packageDir,
      env: {
        PATH: process.env.PATH ?? '',
        INIT_CWD: dir,
        EDGE_SIGNING_KEYS: `${key.kid}:${key.secret}`,
        // The admin API asks no backend; nothing listens here.
        ANALYTICS_BASE_URL: 'http://127.0.0.1:9',
        ANALYTICS_API_KEY: 'unused-key-0123456789abcdef',
      },
    },
  );
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk;
  });
  url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const found = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (found) {
        clearInterval(timer);
        resolve(found);
      }
    }, 20);
    child.once('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`serve exited ${code}: ${output}`));
    });
  });
}, 60_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    await new Promise<void>((done) => {
      child.once('exit', () => done());
      child.kill('SIGTERM');
    });
  }
  await new Promise<void>((done) => (sessions ? sessions.close(() => done()) : done()));
  rmSync(dir, { recursive: true, force: true });
});

const as = (user: string | undefined): Record<string, string> =>
  user ? { cookie: `user=${user}` } : {};

describe('analytics-edge serve --config x.json with admins.subjects', () => {
  it('opens the admin API to a listed subject only', async () => {
    // An id minted through the sign route is recorded with who minted it.
    const signed = await fetch(`${url}/api/sign`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...as('alice') },
      body: JSON.stringify({ query: 'total', label: 'Alice’s chart' }),
    });
    expect(signed.status, await signed.clone().text()).toBe(200);
    const { id } = (await signed.json()) as { id: string };
    const jti = JSON.parse(Buffer.from(id.split('.')[1] ?? '', 'base64url').toString()).jti;

    const list = (user?: string) => fetch(`${url}/api/admin/ids`, { headers: as(user) });
    const root = await list('root');
    expect(root.status).toBe(200);
    const { items } = (await root.json()) as { items: { jti: string; mintedBy: string }[] };
    expect(items).toContainEqual(
      expect.objectContaining({ jti, mintedBy: 'alice', label: 'Alice’s chart' }),
    );
    const shown = await fetch(`${url}/api/admin/ids/${jti}`, { headers: as('root') });
    expect(shown.status).toBe(200);

    for (const [user, status] of [
      ['alice', 403],
      ['mallory', 403],
      [undefined, 401],
    ] as const) {
      const refused = await list(user);
      expect(refused.status, String(user)).toBe(status);
      const body = await refused.text();
      expect(body).not.toContain(jti);
      expect(Object.keys(JSON.parse(body)).sort()).toEqual(['code', 'error']);
      const revoke = await fetch(`${url}/api/admin/ids/${jti}/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...as(user) },
      });
      expect(revoke.status, String(user)).toBe(status);
    }

    // The listed subject revokes; the id is refused from then on.
    const revoked = await fetch(`${url}/api/admin/ids/${jti}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...as('root') },
    });
    expect(revoked.status).toBe(200);
    const data = await fetch(`${url}/api/data`, {
      headers: { authorization: `Bearer ${id}`, ...as('alice') },
    });
    expect(data.status).toBe(401);
  });
});
