/**
 * The edge's state in Redis, shared by every replica (`@analytics-chart/edge/redis`). A separate
 * entry so that Workers bundles, which cannot open TCP connections to Redis, never pull in the
 * client.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import type { LogSink } from '../log/logger.ts';
import { consoleLogSink } from '../log/logger.ts';
import { Lru } from '../protection/lru.ts';
import {
  ALLOWED,
  memoryRateLimitStore,
  type RateDecision,
  type RateLimitStore,
  type RateRule,
} from '../protection/rate-limit.ts';
import {
  type EdgeStore,
  type IssuedId,
  type IssuedIdPage,
  type SharedResult,
  type SharedResults,
  StoreUnavailableError,
} from './edge-store.ts';

/** Options of {@link redisStore}. */
export interface RedisStoreOptions {
  /** `redis://[:password@]host:port[/db]`; `EDGE_REDIS_URL` in the environment. */
  url: string;
  /** Prefix of every key and of the revocation channel, so edges can share one server. @default 'analytics-edge:' */
  prefix?: string;
  /** Longest wait for one Redis command before it counts as failed. @default 250 */
  timeoutMs?: number;
  /**
   * How long this process trusts its copy of the revocation list without hearing from Redis;
   * after that revocation checks fail closed (503). @default 1000
   */
  staleAfterMs?: number;
  /** Where the store says it lost or regained Redis. @default JSON lines on the console */
  log?: LogSink;
}

const REVOKE_SCRIPT = `
redis.call('SADD', KEYS[1], ARGV[1])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HSETNX', KEYS[2], 'revokedAt', ARGV[2]) end
redis.call('PUBLISH', ARGV[3], ARGV[1])
return 1`;

const SEEN_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'views', ARGV[1])
  redis.call('HSET', KEYS[1], 'seen', ARGV[2])
end
return 1`;

// A token bucket on the server's clock, so replicas with drifting clocks share one rate.
// Takes up to ARGV[3] tokens at once (a lease); answers how many it granted and what is left.
const TAKE_SCRIPT = `
local rate, burst, want = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 't', 'a')
local tokens, at = tonumber(b[1]), tonumber(b[2])
if tokens == nil then tokens = burst; at = now end
tokens = math.min(burst, tokens + math.max(0, now - at) / 1000 * rate)
local granted = math.min(want, math.floor(tokens))
if granted < 0 then granted = 0 end
tokens = tokens - granted
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'a', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return {granted, tostring(tokens)}`;

/**
 * Tokens a replica takes from Redis at once: a hundredth of a second's allowance (one for slow
 * limits), so a busy id costs a round trip per lease instead of per request. Leased tokens are
 * already gone from the shared bucket, so replicas together never admit more than the limit;
 * what a replica leases and leaves unused (at most a lease each, for at most a second) only
 * makes the others refuse a little early.
 */
function leaseSize(rule: RateRule): number {
  return Math.max(1, Math.floor(Math.min(rule.perSecond, rule.burst) / 100));
}
const LEASE_MS = 1000;

const UNLOCK_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

const MAX_PENDING_VIEWS = 10_000;
/** Rate-limit leases kept per process; the least recently used is dropped (its tokens lapse). */
const MAX_LEASES = 50_000;

/** Rejects with {@link StoreUnavailableError} when `promise` takes longer than `ms`. */
function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    // The timer and a reply that arrived during a stalled event loop come due together, and
    // timers run first: one more turn lets that reply win, so a busy process is not a slow Redis.
    timer = setTimeout(
      () => setImmediate(() => reject(new StoreUnavailableError('Redis did not answer in time'))),
      ms,
    );
  });
  return Promise.race([promise, late])
    .catch((error: unknown) => {
      throw error instanceof StoreUnavailableError
        ? error
        : new StoreUnavailableError((error as Error)?.message ?? 'Redis failed');
    })
    .finally(() => clearTimeout(timer));
}

/**
 * The edge's state in Redis. Revocations reach every replica by pub/sub and are checked against
 * a copy in each process, so the data route never waits on Redis for them; the copy is trusted
 * only while Redis answered within `staleAfterMs`, and is read again whole after every
 * reconnection (and whenever Redis holds more revoked ids than the copy), so a message lost
 * while a connection was down is never missed. Resolves once connected and the copy is loaded.
 */
export async function redisStore(options: RedisStoreOptions): Promise<EdgeStore> {
  const prefix = options.prefix ?? 'analytics-edge:';
  const timeoutMs = options.timeoutMs ?? 250;
  const staleAfterMs = options.staleAfterMs ?? 1000;
  const log = options.log ?? consoleLogSink;
  const revokedKey = `${prefix}revoked`;
  const idsKey = `${prefix}ids`;
  const channel = `${prefix}revocations`;
  const idKey = (jti: string) => `${prefix}id:${jti}`;
  // One index per minter, beside the registry's: a minter's ids, newest first, without a scan.
  const minterKey = (mintedBy: string) => `${prefix}ids-by:${mintedBy}`;

  const socket = {
    connectTimeout: 1000,
    // Retry quickly and forever: recovery must not wait for a restart.
    reconnectStrategy: (retries: number) => Math.min(50 * (retries + 1), 500),
  };
  // No offline queue: while Redis is away a command fails at once instead of waiting.
  const client = createClient({ url: options.url, socket, disableOfflineQueue: true });
  const subscriber = client.duplicate();
  let closed = false;

  const revoked = new Set<string>();
  let synced = false;
  let lastHeardMs = 0;
  let down = false;

  const problem = (message: string) => {
    if (down || closed) return;
    down = true;
    log({ level: 'error', event: 'store.unavailable', message });
  };
  const recovered = () => {
    if (!down) return;
    down = false;
    log({ level: 'info', event: 'store.recovered', message: 'Redis answers again' });
  };
  let lastError: string | undefined;
  client.on('error', (error: Error) => {
    lastError = error.message;
    problem(`Redis: ${error.message}`);
  });
  subscriber.on('error', (error: Error) => {
    synced = false;
    problem(`Redis subscription: ${error.message}`);
  });
  subscriber.on('end', () => {
    synced = false;
  });
  subscriber.on('reconnecting', () => {
    synced = false;
  });

  /** Reads the whole list into the copy, and writes back ids the copy has that Redis lost. */
  async function resync(): Promise<void> {
    const members = await within(timeoutMs, client.sMembers(revokedKey));
    const inRedis = new Set(members);
    for (const jti of members) revoked.add(jti);
    const lost = [...revoked].filter((jti) => !inRedis.has(jti));
    if (lost.length) await within(timeoutMs, client.sAdd(revokedKey, lost));
    synced = true;
    lastHeardMs = Date.now();
    recovered();
  }

  subscriber.on('ready', () => {
    // The subscription is renewed on the same connection; read the list after it is in place.
    setTimeout(() => {
      resync().catch((error: unknown) => problem(`Redis resync: ${(error as Error).message}`));
    }, 0);
  });

  try {
    await within(2000, client.connect());
    await within(2000, subscriber.connect());
    await within(
      2000,
      subscriber.subscribe(channel, (jti) => revoked.add(jti)),
    );
    await resync();
  } catch (error) {
    // Otherwise the clients would go on reconnecting and keep the process alive.
    const reason = lastError ?? (error as Error).message;
    closed = true;
    for (const c of [client, subscriber]) {
      try {
        c.destroy();
      } catch {
        // Not open yet: nothing to close.
      }
    }
    throw new StoreUnavailableError(reason);
  }

  /** The heartbeat: Redis answered recently, and holds no revoked id the copy lacks. */
  const beat = setInterval(
    () => {
      if (!client.isReady) return;
      within(timeoutMs, client.sCard(revokedKey))
        .then(async (count) => {
          if (count > revoked.size || !synced) {
            if (subscriber.isReady) await resync();
            else return;
          }
          lastHeardMs = Date.now();
          recovered();
        })
        .catch((error: unknown) => problem(`Redis heartbeat: ${(error as Error).message}`));
    },
    Math.max(50, Math.floor(staleAfterMs / 4)),
  );
  beat.unref();

  const pendingViews = new Map<string, { views: number; lastMs: number }>();
  const flush = setInterval(() => {
    if (!pendingViews.size || !client.isReady) return;
    const batch = [...pendingViews];
    pendingViews.clear();
    // Approximate by design: a batch lost to an outage is not retried.
    Promise.all(
      batch.map(([jti, v]) =>
        client.eval(SEEN_SCRIPT, {
          keys: [idKey(jti)],
          arguments: [String(v.views), String(v.lastMs)],
        }),
      ),
    ).catch(() => {});
  }, 1000);
  flush.unref();

  const fallback = memoryRateLimitStore();
  let limitsDown = false;
  const leases = new Lru<string, { left: number; until: number }>(MAX_LEASES);
  const rateLimits: RateLimitStore = {
    take(key, rule, nowMs) {
      const lease = leases.get(key);
      if (lease && lease.left >= 1 && nowMs < lease.until) {
        lease.left -= 1;
        return ALLOWED;
      }
      if (!client.isReady) return fallback.take(key, rule, nowMs);
      const want = leaseSize(rule);
      return within(
        timeoutMs,
        client.eval(TAKE_SCRIPT, {
          keys: [`${prefix}rl:${key}`],
          arguments: [String(rule.perSecond), String(rule.burst), String(want)],
        }) as Promise<[number, string]>,
      ).then(
        ([granted, tokens]): RateDecision => {
          limitsDown = false;
          if (granted >= 1) {
            // Takes that found the lease empty at once each lease; what they leave adds up.
            const held = leases.get(key);
            const left = (held && nowMs < held.until ? held.left : 0) + granted - 1;
            if (left >= 1) leases.set(key, { left, until: nowMs + LEASE_MS });
            return ALLOWED;
          }
          return {
            allowed: false,
            retryAfterSeconds: Math.max(1, Math.ceil((1 - Number(tokens)) / rule.perSecond)),
          };
        },
        () => {
          if (!limitsDown) {
            limitsDown = true;
            log({
              level: 'warn',
              event: 'store.limits_local',
              message: 'rate limits fall back to this process while Redis is away',
            });
          }
          return fallback.take(key, rule, nowMs);
        },
      );
    },
  };

  // Keys are the resolved query's canonical JSON, hashed to keep Redis keys short.
  const resultKey = (key: string) =>
    `${prefix}result:${createHash('sha256').update(key).digest('base64url')}`;
  const lockKey = (key: string) => `${resultKey(key)}:lock`;
  const owner = randomUUID();
  const results: SharedResults = {
    async read(key) {
      if (!client.isReady) throw new StoreUnavailableError('Redis is not connected');
      const text = await within(timeoutMs, client.get(resultKey(key)));
      return text ? (JSON.parse(text) as SharedResult) : undefined;
    },
    async write(key, result, keepMs) {
      await within(
        timeoutMs,
        client.set(resultKey(key), JSON.stringify(result), { PX: Math.max(1, keepMs) }),
      );
    },
    async lock(key, ttlMs) {
      if (!client.isReady) throw new StoreUnavailableError('Redis is not connected');
      const taken = await within(
        timeoutMs,
        client.set(lockKey(key), owner, { NX: true, PX: ttlMs }),
      );
      return taken === 'OK';
    },
    async unlock(key) {
      await within(
        timeoutMs,
        client.eval(UNLOCK_SCRIPT, { keys: [lockKey(key)], arguments: [owner] }),
      );
    },
  };

  const toIssued = (jti: string, fields: Record<string, string>): IssuedId | null => {
    if (!fields.doc) return null;
    const doc = JSON.parse(fields.doc) as IssuedId;
    return {
      ...doc,
      jti,
      views: Number(fields.views ?? 0),
      lastSeenAt: fields.seen ? new Date(Number(fields.seen)).toISOString() : undefined,
      revokedAt: fields.revokedAt ? new Date(Number(fields.revokedAt)).toISOString() : undefined,
    };
  };

  return {
    kind: 'redis',
    isRevoked(jti) {
      if (revoked.has(jti)) return true;
      if (!synced || Date.now() - lastHeardMs > staleAfterMs) {
        throw new StoreUnavailableError('the revocation list may be stale');
      }
      return false;
    },
    async revoke(jti, nowMs) {
      revoked.add(jti);
      await within(
        timeoutMs,
        client.eval(REVOKE_SCRIPT, {
          keys: [revokedKey, idKey(jti)],
          arguments: [jti, String(nowMs), channel],
        }),
      );
    },
    async record(id) {
      const { views: _v, lastSeenAt: _s, revokedAt: _r, ...doc } = id;
      const key = idKey(id.jti);
      await within(
        timeoutMs,
        client
          .multi()
          .hSet(key, { doc: JSON.stringify(doc), views: '0' })
          .pExpireAt(key, Date.parse(id.expiresAt))
          .zAdd(idsKey, { score: Date.parse(id.issuedAt), value: id.jti })
          .zAdd(minterKey(id.mintedBy), { score: Date.parse(id.issuedAt), value: id.jti })
          .exec(),
      );
    },
    async get(jti) {
      const fields = await within(timeoutMs, client.hGetAll(idKey(jti)));
      return toIssued(jti, fields as Record<string, string>);
    },
    async list(cursor, limit, filter) {
      const start = cursor === undefined ? 0 : Number(cursor);
      const index = filter?.mintedBy === undefined ? idsKey : minterKey(filter.mintedBy);
      const jtis = await within(
        timeoutMs,
        client.zRange(index, start, start + limit - 1, { REV: true }),
      );
      const rows = await within(
        timeoutMs,
        Promise.all(jtis.map((jti) => client.hGetAll(idKey(jti)))),
      );
      const items: IssuedId[] = [];
      const gone: string[] = [];
      rows.forEach((fields, i) => {
        const jti = jtis[i] as string;
        const item = toIssued(jti, fields as Record<string, string>);
        if (item) items.push(item);
        else gone.push(jti);
      });
      // Expired entries leave the index as lists pass over them.
      if (gone.length) client.zRem(index, gone).catch(() => {});
      const next = jtis.length === limit ? String(start + limit) : undefined;
      return { items, next } satisfies IssuedIdPage;
    },
    seen(jti, nowMs) {
      const pending = pendingViews.get(jti);
      if (pending) {
        pending.views += 1;
        pending.lastMs = nowMs;
      } else if (pendingViews.size < MAX_PENDING_VIEWS) {
        pendingViews.set(jti, { views: 1, lastMs: nowMs });
      }
    },
    rateLimits,
    results,
    async close() {
      closed = true;
      clearInterval(beat);
      clearInterval(flush);
      await Promise.allSettled([client.quit(), subscriber.quit()]);
    },
  };
}
