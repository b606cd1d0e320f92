/**
 * Listing one minter's ids, on each store the edge ships: in process, Redis (a real
 * redis-server) and D1 (workerd's, through Miniflare). A minter's oldest id must be as
 * reachable as the registry's newest, however many ids others minted since.
 */
import { type RedisServer, startRedis } from '@analytics-chart/test-kit/redis-server';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { d1Store, type RegistryDatabase } from '../src/adapter/workers/d1-store.ts';
import type { EdgeStore, IssuedId } from '../src/store/edge-store.ts';
import { memoryStore } from '../src/store/memory-store.ts';
import { redisStore } from '../src/store/redis-store.ts';

let redis: RedisServer;
let mf: Miniflare;
const stores: Record<string, EdgeStore> = {};

beforeAll(async () => {
  redis = await startRedis();
  mf = new Miniflare({
    modules: true,
    script: 'export default { fetch: () => new Response("ok") }',
    compatibilityDate: '2025-01-01',
    d1Databases: { EDGE_REGISTRY: 'registry' },
  });
  const db = (await mf.getD1Database('EDGE_REGISTRY')) as unknown as RegistryDatabase;
  stores.memory = memoryStore();
  stores.redis = await redisStore({ url: redis.url, log: () => {} });
  stores.d1 = d1Store(db);
}, 30_000);

afterAll(async () => {
  await Promise.all(Object.values(stores).map((s) => s.close()));
  await redis?.stop();
  await mf?.dispose();
});

const T0 = Date.parse('2026-01-01T00:00:00Z');
const DAY = 86_400_000;

function entry(jti: string, mintedBy: string, issuedMs: number, expiresMs: number): IssuedId {
  return {
    jti,
    query: 'total',
    title: undefined,
    params: {},
    aud: undefined,
    label: jti,
    public: true,
    mintedBy,
    issuedAt: new Date(issuedMs).toISOString(),
    expiresAt: new Date(expiresMs).toISOString(),
    revokedAt: undefined,
    lastSeenAt: undefined,
    views: 0,
  };
}

describe.each(['memory', 'redis', 'd1'])('the %s store lists one minter’s ids', (kind) => {
  it('oldest included, newest first, page by page, expired ones left out', async () => {
    const store = stores[kind] as EdgeStore;
    const far = Date.now() + 30 * DAY;
    const mine = ['mine-aaaa-1', 'mine-aaaa-2', 'mine-aaaa-3'];
    for (const [i, jti] of mine.entries()) {
      await store.record(entry(jti, 'studio@acme:ann', T0 + i * 1000, far));
    }
    await store.record(entry('mine-expired', 'studio@acme:ann', T0 + 5000, Date.now() - 1000));
    // The same subject in another tenant, and a crowd of newer ids by others.
    await store.record(entry('twin-aaaa-1', 'studio@globex:ann', T0 + 6000, far));
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        store.record(entry(`other-${String(i).padStart(4, '0')}`, 'cli', T0 + DAY + i, far)),
      ),
    );

    const newest = await store.list(undefined, 10);
    expect(newest.items).toHaveLength(10);
    expect(newest.items.some((e) => e.jti.startsWith('mine'))).toBe(false);

    const all = await store.list(undefined, 100, { mintedBy: 'studio@acme:ann' });
    expect(all.items.map((e) => e.jti)).toEqual([...mine].reverse());
    expect(all.next).toBeUndefined();

    const first = await store.list(undefined, 2, { mintedBy: 'studio@acme:ann' });
    expect(first.items.map((e) => e.jti)).toEqual(['mine-aaaa-3', 'mine-aaaa-2']);
    const rest = await store.list(first.next, 2, { mintedBy: 'studio@acme:ann' });
    expect(rest.items.map((e) => e.jti)).toEqual(['mine-aaaa-1']);

    const twin = await store.list(undefined, 100, { mintedBy: 'studio@globex:ann' });
    expect(twin.items.map((e) => e.jti)).toEqual(['twin-aaaa-1']);
    expect((await store.list(undefined, 100, { mintedBy: 'nobody' })).items).toEqual([]);
  }, 30_000);
});
