/**
 * The registry of issued ids on Workers, in D1. D1 rather than KV: listing newest first page by
 * page and adding view counts are one SQL statement each, whereas KV lists only by key and
 * takes about one write per second per key. A revocation is written to D1 (and to the KV
 * namespace `EDGE_REVOCATIONS` when bound, for tools that read it); every isolate reads it from
 * D1 through `d1RevocationCheck`, which remembers each answer for half a second, so it takes
 * effect everywhere within a second while a busy id costs one D1 read per isolate per half
 * second, not one per request. (KV alone propagates in up to a minute.)
 */
import { Lru } from '../../protection/lru.ts';
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
  // An expression index: a minter's ids without a scan, and no column for older tables to lack.
  "CREATE INDEX IF NOT EXISTS edge_issued_ids_by_minter ON edge_issued_ids (json_extract(doc, '$.mintedBy'), issued_at DESC, jti);",
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

const schemas = new WeakMap<RegistryDatabase, Promise<unknown>>();

/** Creates the table once per database binding (again after a failure). */
function ensureSchema(db: RegistryDatabase): Promise<unknown> {
  let ready = schemas.get(db);
  if (!ready) {
    ready = db.exec(SCHEMA).catch((error: unknown) => {
      schemas.delete(db);
      throw error;
    });
    schemas.set(db, ready);
  }
  return ready;
}

/** Options of {@link d1RevocationCheck}. */
export interface D1RevocationOptions {
  /** How long an isolate trusts an answer, in milliseconds. @default 500 */
  maxAgeMs?: number;
  /** How many ids' answers an isolate remembers. @default 10000 */
  maxEntries?: number;
}

/**
 * An `isRevoked` hook reading the registry's `revoked_at` in D1 (`createWorker` uses it by itself
 * when `EDGE_REGISTRY` is bound): a revocation made by any isolate, the admin API or the CLI
 * is refused by every isolate once its remembered answer is older than `maxAgeMs`. Concurrent
 * requests for one id share one read; a remembered answer is given synchronously. An id the
 * registry does not hold is not revoked there. When D1 cannot be read the hook throws, and the
 * edge fails the request (502) rather than serving an id that may be revoked.
 */
export function d1RevocationCheck(
  db: RegistryDatabase,
  options: D1RevocationOptions = {},
): (jti: string) => boolean | Promise<boolean> {
  const maxAgeMs = options.maxAgeMs ?? 500;
  const answers = new Lru<string, { at: number; revoked: boolean | Promise<boolean> }>(
    options.maxEntries ?? 10_000,
  );
  const read = async (jti: string): Promise<boolean> => {
    await ensureSchema(db);
    const row = await db
      .prepare('SELECT revoked_at FROM edge_issued_ids WHERE jti = ?')
      .bind(jti)
      .first<{ revoked_at: number | null }>();
    return row?.revoked_at != null;
  };
  return (jti) => {
    const now = Date.now();
    const known = answers.get(jti);
    // A revoked id stays revoked: no need to ask again.
    if (known && (known.revoked === true || now - known.at < maxAgeMs)) return known.revoked;
    // Timed from the read's start, so an answer is never trusted for longer than `maxAgeMs`.
    const entry = {
      at: now,
      revoked: read(jti).then(
        (revoked) => {
          entry.revoked = revoked;
          return revoked;
        },
        (error: unknown) => {
          answers.delete(jti);
          throw error;
        },
      ) as boolean | Promise<boolean>,
    };
    answers.set(jti, entry);
    return entry.revoked;
  };
}

/**
 * The edge's state on Workers: the registry in D1 (`EDGE_REGISTRY`), revocations written to the
 * KV namespace when one is given, and in-isolate rate-limit buckets (`createWorker` uses the
 * Durable Object limiter instead when `EDGE_RATE_LIMITER` is bound). The table is created on
 * first use.
 */
export function d1Store(db: RegistryDatabase, revocations?: RevocationWriter): EdgeStore {
  const schema = () => ensureSchema(db);
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
    async list(cursor, limit, filter) {
      const start = cursor === undefined ? 0 : Number(cursor);
      const minter = filter?.mintedBy;
      const { results } = await guarded(() =>
        minter === undefined
          ? db
              .prepare(
                'SELECT * FROM edge_issued_ids WHERE expires_at > ? ORDER BY issued_at DESC, jti LIMIT ? OFFSET ?',
              )
              .bind(Date.now(), limit + 1, start)
              .all<Row>()
          : db
              .prepare(
                "SELECT * FROM edge_issued_ids WHERE json_extract(doc, '$.mintedBy') = ? AND expires_at > ? ORDER BY issued_at DESC, jti LIMIT ? OFFSET ?",
              )
              .bind(minter, Date.now(), limit + 1, start)
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
