/**
 * The Workers registry against workerd's own D1 (through Miniflare) and KV: the edge records,
 * lists, pages, counts views and revokes, and a revocation lands in the KV namespace every
 * isolate reads.
 */
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveEdge } from '../src/adapter/node/serve-edge.ts';
import {
  d1Store,
  type RegistryDatabase,
  type RevocationWriter,
} from '../src/adapter/workers/d1-store.ts';
import { createEdge, type Edge } from '../src/create-edge.ts';
import { generateSigningKey } from '../src/tokens/signing-keys.ts';

let mf: Miniflare;
let edge: Edge;
let kv: RevocationWriter & { get(key: string): Promise<string | null> };
let served: { url: string; close(): Promise<void> };

beforeAll(async () => {
  mf = new Miniflare({
    modules: true,
    script: 'export default { fetch: () => new Response("ok") }',
    compatibilityDate: '2025-01-01',
    d1Databases: { EDGE_REGISTRY: 'registry' },
    kvNamespaces: { EDGE_REVOCATIONS: 'revocations' },
  });
  const db = (await mf.getD1Database('EDGE_REGISTRY')) as unknown as RegistryDatabase;
  kv = (await mf.getKVNamespace('EDGE_REVOCATIONS')) as unknown as typeof kv;
  edge = createEdge({
    signingKeys: [generateSigningKey()],
    backend: { query: async () => ({ result: [{ value: 7 }], metadata: {} }) },
    queries: {
      total: { query: { graph_type: 'Single Value', start: '1 day ago', end: 'now' } },
    },
    authorize: (c) => (c.req.header('x-user') ? { subject: String(c.req.header('x-user')) } : null),
    admin: (session) => session.subject === 'root',
    store: d1Store(db, kv),
    log: () => {},
  });
  served = await serveEdge(edge, { port: 0, hostname: '127.0.0.1' });
}, 30_000);

afterAll(async () => {
  await served?.close();
  await mf?.dispose();
});

const admin = (path: string, method = 'GET') =>
  fetch(`${served.url}/api/admin/ids${path}`, {
    method,
    headers: { 'x-user': 'root', 'content-type': 'application/json' },
  });

describe('the D1 registry', () => {
  it('records, pages, counts views and revokes into KV', async () => {
    const a = await edge.signQueryId({ query: 'total', public: true, label: 'first' });
    await new Promise((r) => setTimeout(r, 5));
    const b = await edge.signQueryId({ query: 'total', public: true, label: 'second' });
    const one = (await (await admin('?limit=1')).json()) as {
      items: { jti: string }[];
      next?: string;
    };
    expect(one.items.map((i) => i.jti)).toEqual([b.jti]);
    const two = (await (await admin(`?limit=1&cursor=${one.next}`)).json()) as {
      items: { jti: string }[];
      next?: string;
    };
    expect(two.items.map((i) => i.jti)).toEqual([a.jti]);
    expect(two.next).toBeUndefined();

    const get = () =>
      fetch(`${served.url}/api/data`, { headers: { authorization: `Bearer ${a.id}` } });
    expect((await get()).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1050));
    expect((await get()).status).toBe(200); // flushes the first view
    await expect
      .poll(async () => ((await (await admin(`/${a.jti}`)).json()) as { views: number }).views)
      .toBeGreaterThanOrEqual(1);

    expect((await admin(`/${a.jti}/revoke`, 'POST')).status).toBe(200);
    expect((await get()).status).toBe(401);
    expect(await kv.get(a.jti)).toBe('revoked');
    const shown = (await (await admin(`/${a.jti}`)).json()) as {
      revokedAt?: string;
      label: string;
    };
    expect(shown).toMatchObject({ label: 'first', revokedAt: expect.stringMatching(/^\d{4}-/) });
  }, 20_000);
});
