import { Lru } from './lru.ts';

/** A token bucket: `perSecond` tokens refill each second, up to `burst`. */
export interface RateRule {
  perSecond: number;
  burst: number;
}

/** The answer of a bucket: allowed, or refused with the seconds until a token is back. */
export interface RateDecision {
  allowed: boolean;
  retryAfterSeconds: number;
}

/**
 * Where buckets live. The in-memory store suits one process; a shared store (Redis, a Durable
 * Object, …) implements the same method so limits hold across instances. Synchronous answers are
 * allowed so the in-memory store costs no extra await on the hot path.
 */
export interface RateLimitStore {
  take(key: string, rule: RateRule, nowMs: number): RateDecision | Promise<RateDecision>;
}

/** Options of {@link memoryRateLimitStore}. */
export interface MemoryRateLimitOptions {
  /** Buckets kept; the least recently used is forgotten first (it refills anyway). @default 50000 */
  maxKeys?: number;
}

/** The one allowed decision, shared so an allowed take allocates nothing. */
export const ALLOWED: RateDecision = Object.freeze({ allowed: true, retryAfterSeconds: 0 });

/** Token buckets in a bounded in-memory LRU map. */
export function memoryRateLimitStore(options: MemoryRateLimitOptions = {}): RateLimitStore {
  const buckets = new Lru<string, { tokens: number; at: number }>(options.maxKeys ?? 50_000);
  return {
    take(key, rule, nowMs) {
      let bucket = buckets.get(key);
      if (!bucket) {
        bucket = { tokens: rule.burst, at: nowMs };
        buckets.set(key, bucket);
      } else {
        const elapsed = Math.max(0, nowMs - bucket.at) / 1000;
        bucket.tokens = Math.min(rule.burst, bucket.tokens + elapsed * rule.perSecond);
        bucket.at = nowMs;
      }
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return ALLOWED;
      }
      return {
        allowed: false,
        retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / rule.perSecond)),
      };
    },
  };
}
