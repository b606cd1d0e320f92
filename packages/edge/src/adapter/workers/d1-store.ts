/**
 * The registry of issued ids on Workers, in D1. D1 rather than KV: listing newest first page by
 * page and adding view counts are one SQL statement each, whereas KV lists only by key and
 * takes about one write per second per key. Revocations still travel through the KV namespace
 * `EDGE_REVOCATIONS` (read by every isolate through `kvRevocationCheck`, within about a
 * minute): a D1 read on every data request would put a round trip on the hot path.
 */
import { memoryRateLimitStore } from '../../protection/rate-limit.ts';
import { type EdgeStore, type IssuedId, StoreUnavailableError } from '../../store/edge-store.ts';

/** The part of a D1 binding the store uses (no Workers types needed). */
export interface RegistryDatabase {
  prepare(sql: string): {
    bind(...values: unknown[]): {
      run(): Promise<unknown>;
      first<T = Record<string, unknown>>(): Promise<T | null>;
      all<T = Record<string, unknown>>(): Promise<{ results: T[] }>;
    };
  };
  exec(sql: string): Promise<unknown>;
}

/** Where a revocation is written so that every isolate's `kvRevocationCheck` reads it. */
export interface RevocationWriter {
  put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void>;
}

// D1's exec runs one statement per line.
const SCHEMA = [
  'CREATE TABLE IF NOT EXISTS edge_issued_ids (jti TEXT PRIMARY KEY, doc TEXT NOT NULL, issued_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, revoked_at INTEGER, last_seen INTEGER, views INTEGER NOT NULL DEFAULT 0);',
  'CREATE INDEX IF NOT EXISTS edge_issued_ids_by_time ON edge_issued_ids (issued_at DESC, jti);',
].join('\n');

interface Row {
  jti: string;
  doc: string;
  revoked_at: number | null;
  last_seen: number | null;
  views: number;
}

const FLUSH_MS = 1000;
const MAX_PENDING_VIEWS = 10_000;

/**
 * The edge's state on Workers: the registry in D1 (`EDGE_REGISTRY`), revocations written to the
 * KV namespace when one is given, and in-isolate rate-limit buckets (`createWorker` uses the
 * Durable Object limiter instead when `EDGE_RATE_LIMITER` is bound). The table is created on
 * first use.
 */
export function d1Store(db: RegistryDatabase, revocations?: RevocationWriter): EdgeStore {
  let ready: Promise<unknown> | undefined;
  const schema = () => {
    ready ??= db.exec(SCHEMA).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  };
  /** A D1 failure is the store being unavailable: a 503, never a stack trace. */
  const guarded = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      await schema();
      return await work();
    } catch (error) {
      throw new StoreUnavailableError((error as Error)?.message ?? 'D1 failed');
    }
  };
  const revoked = new Set<string>();
  const pending = new Map<string, { views: number; lastMs: number }>();
  let flushedAt = Date.now();

  const toIssued = (row: Row): IssuedId => ({
    ...(JSON.parse(row.doc) as IssuedId),
    jti: row.jti,
    views: row.views,
    lastSeenAt: row.last_seen ? new Date(row.last_seen).toISOString() : undefined,
    revokedAt: row.revoked_at ? new Date(row.revoked_at).toISOString() : undefined,
  });

  /** Views are added in batches from later requests; a batch lost with its isolate is not retried. */
  function flush(nowMs: number) {
    if (!pending.size || nowMs - flushedAt < FLUSH_MS) return;
    flushedAt = nowMs;
    const batch = [...pending];
    pending.clear();
    guarded(() =>
      Promise.all(
        batch.map(([jti, v]) =>
          db
            .prepare(
              'UPDATE edge_issued_ids SET views = views + ?, last_seen = MAX(COALESCE(last_seen, 0), ?) WHERE jti = ?',
            )
            .bind(v.views, v.lastMs, jti)
            .run(),
        ),
      ),
    ).catch(() => {});
  }

  return {
    kind: 'd1',
    isRevoked: (jti) => revoked.has(jti),
    async revoke(jti, nowMs) {
      revoked.add(jti);
      await guarded(async () => {
        await db
          .prepare('UPDATE edge_issued_ids SET revoked_at = COALESCE(revoked_at, ?) WHERE jti = ?')
          .bind(nowMs, jti)
          .run();
        await revocations?.put(jti, 'revoked');
      });
    },
    async record(id) {
      const { views: _v, lastSeenAt: _s, revokedAt: _r, ...doc } = id;
      await guarded(() =>
        db
          .prepare(
            'INSERT OR REPLACE INTO edge_issued_ids (jti, doc, issued_at, expires_at, views) VALUES (?, ?, ?, ?, 0)',
          )
          .bind(id.jti, JSON.stringify(doc), Date.parse(id.issuedAt), Date.parse(id.expiresAt))
          .run(),
      );
    },
    async get(jti) {
      const row = await guarded(() =>
        db
          .prepare('SELECT * FROM edge_issued_ids WHERE jti = ? AND expires_at > ?')
          .bind(jti, Date.now())
          .first<Row>(),
      );
      return row ? toIssued(row) : null;
    },
    async list(cursor, limit) {
      const start = cursor === undefined ? 0 : Number(cursor);
      const { results } = await guarded(() =>
        db
          .prepare(
            'SELECT * FROM edge_issued_ids WHERE expires_at > ? ORDER BY issued_at DESC, jti LIMIT ? OFFSET ?',
          )
          .bind(Date.now(), limit + 1, start)
          .all<Row>(),
      );
      return {
        items: results.slice(0, limit).map(toIssued),
        next: results.length > limit ? String(start + limit) : undefined,
      };
    },
    seen(jti, nowMs) {
      const entry = pending.get(jti);
      if (entry) {
        entry.views += 1;
        entry.lastMs = nowMs;
      } else if (pending.size < MAX_PENDING_VIEWS) {
        pending.set(jti, { views: 1, lastMs: nowMs });
      }
      flush(nowMs);
    },
    rateLimits: memoryRateLimitStore(),
    close: async () => flush(Number.POSITIVE_INFINITY),
  };
}
