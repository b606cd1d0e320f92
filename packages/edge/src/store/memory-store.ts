import { memoryRateLimitStore } from '../protection/rate-limit.ts';
import type { EdgeStore, IssuedId, IssuedIdPage } from './edge-store.ts';

/** Options of {@link memoryStore}. */
export interface MemoryStoreOptions {
  /** Registry entries kept; the oldest minted is forgotten first. @default 10000 */
  maxIds?: number;
}

/**
 * The edge's state in this process only: right for one process and for tests. Several replicas
 * each keep their own, so a revocation reaches one of them; use `redisStore` there.
 */
export function memoryStore(options: MemoryStoreOptions = {}): EdgeStore {
  const maxIds = options.maxIds ?? 10_000;
  // Insertion order is mint order, so the first key is the oldest to forget.
  const ids = new Map<string, IssuedId>();
  const revoked = new Set<string>();
  return {
    kind: 'memory',
    isRevoked: (jti) => revoked.has(jti),
    async revoke(jti, nowMs) {
      revoked.add(jti);
      const entry = ids.get(jti);
      if (entry && !entry.revokedAt) entry.revokedAt = new Date(nowMs).toISOString();
    },
    async record(id) {
      ids.set(id.jti, { ...id });
      if (ids.size > maxIds) ids.delete(ids.keys().next().value as string);
    },
    async get(jti) {
      const entry = ids.get(jti);
      if (!entry) return null;
      if (Date.parse(entry.expiresAt) <= Date.now()) {
        ids.delete(jti);
        return null;
      }
      return { ...entry };
    },
    async list(cursor, limit, filter) {
      const now = Date.now();
      const minter = filter?.mintedBy;
      const all = [...ids.values()]
        .filter((e) => Date.parse(e.expiresAt) > now)
        .filter((e) => minter === undefined || e.mintedBy === minter)
        .sort((a, b) => b.issuedAt.localeCompare(a.issuedAt) || a.jti.localeCompare(b.jti));
      const start = cursor === undefined ? 0 : Number(cursor);
      const items = all.slice(start, start + limit).map((e) => ({ ...e }));
      const next = start + limit < all.length ? String(start + limit) : undefined;
      return { items, next } satisfies IssuedIdPage;
    },
    seen(jti, nowMs) {
      const entry = ids.get(jti);
      if (!entry) return;
      entry.views += 1;
      entry.lastSeenAt = new Date(nowMs).toISOString();
    },
    rateLimits: memoryRateLimitStore(),
    close: async () => {},
  };
}
