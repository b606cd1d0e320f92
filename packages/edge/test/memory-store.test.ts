/**
 * The in-process store behind one edge on a real socket: the start-up line that says state is
 * per process, the registry the sign API and `signQueryId` fill, and the admin API over it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveEdge } from '../src/adapter/node/serve-edge.ts';
import { createEdge, type Edge } from '../src/create-edge.ts';
import type { LogEntry } from '../src/log/logger.ts';
import { generateSigningKey } from '../src/tokens/signing-keys.ts';

const logs: LogEntry[] = [];
let edge: Edge;
let served: { url: string; close(): Promise<void> };

beforeAll(async () => {
  edge = createEdge({
    signingKeys: [generateSigningKey()],
    backend: { query: async () => ({ result: [{ value: 7 }], metadata: {} }) },
    queries: {
      total: { query: { graph_type: 'Single Value', start: '1 day ago', end: 'now' } },
    },
    authorize: (c) => {
      const user = c.req.header('x-user');
      return user ? { subject: user } : null;
    },
    admin: (session) => session.subject === 'root',
    log: (e) => logs.push(e),
  });
  served = await serveEdge(edge, { port: 0, hostname: '127.0.0.1' });
});

afterAll(() => served.close());

const admin = (path: string, user?: string, method = 'GET') =>
  fetch(`${served.url}/api/admin/ids${path}`, {
    method,
    headers: {
      ...(user ? { 'x-user': user } : {}),
      ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
    },
  });

describe('the in-process store', () => {
  it('says at start-up that state lives in this process', () => {
    expect(logs.filter((e) => e.event === 'store.memory')).toHaveLength(1);
    expect(edge.store.kind).toBe('memory');
  });

  it('records, lists, counts views and revokes through the admin API', async () => {
    const server = await edge.signQueryId({ query: 'total', public: true, label: 'Home page' });
    const signed = await fetch(`${served.url}/api/sign`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-user': 'ann' },
      body: JSON.stringify({ query: 'total', label: 'Ann' }),
    });
    expect(signed.status).toBe(200);
    const get = () =>
      fetch(`${served.url}/api/data`, { headers: { authorization: `Bearer ${server.id}` } });
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(200);

    const page = (await (await admin('', 'root')).json()) as {
      items: { jti: string; label: string; mintedBy: string; views: number }[];
    };
    expect(page.items.map((i) => [i.label, i.mintedBy])).toEqual(
      expect.arrayContaining([
        ['Home page', 'server'],
        ['Ann', 'ann'],
      ]),
    );
    expect(page.items.find((i) => i.jti === server.jti)?.views).toBe(2);

    expect((await admin('', 'ann')).status).toBe(403);
    // Without a JSON content type (a cross-site form): refused, nothing revoked.
    const form = await fetch(`${served.url}/api/admin/ids/${server.jti}/revoke`, {
      method: 'POST',
      headers: { 'x-user': 'root', 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    expect((await get()).status).toBe(200);
    expect((await admin(`/${server.jti}/revoke`, 'root', 'POST')).status).toBe(200);
    expect((await get()).status).toBe(401);
    const shown = (await (await admin(`/${server.jti}`, 'root')).json()) as { revokedAt?: string };
    expect(shown.revokedAt).toMatch(/^\d{4}-/);
    expect((await admin('/nope-nope-nope', 'root')).status).toBe(404);
    expect((await admin('', 'root', 'DELETE')).status).toBe(405);
  });

  it('refuses a label that is not plain text from signQueryId too', async () => {
    await expect(
      edge.signQueryId({ query: 'total', public: true, label: '<script>x</script>' }),
    ).rejects.toThrow(/plain text/);
  });
});
