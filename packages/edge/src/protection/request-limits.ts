import type { Context } from 'hono';
import type { EdgeSettings } from '../config/edge-config.ts';
import { EdgeError } from '../http/edge-error.ts';
import type { Step } from '../http/pipeline.ts';
import type { RateLimitStore, RateRule } from './rate-limit.ts';

/** The rate limits every route applies: per client address, and per id. */
export interface RequestLimits {
  /** The client's address as the config reads it (for per-address keys). */
  address(c: Context): string | undefined;
  /** Takes a token from the client's per-address bucket, shared by every API route. */
  client(c: Context, nowMs: number): undefined | Promise<void>;
  /** Takes a token from a per-id bucket, unless per-id limits are off. */
  id(key: string, nowMs: number): undefined | Promise<void>;
}

/** Throws the 429 for a refused decision. */
function refuse(retryAfter: number): never {
  throw new EdgeError('rate_limited', 'Too many requests; try again shortly.', { retryAfter });
}

/**
 * Takes one token from a bucket or throws the 429. Synchronous when the store is (the in-memory
 * one is), so the hot path pays no extra await; a promise only for shared stores.
 */
function take(
  store: RateLimitStore,
  key: string,
  rule: RateRule | false,
  nowMs: number,
): undefined | Promise<void> {
  if (rule === false) return undefined;
  const decision = store.take(key, rule, nowMs);
  if (decision instanceof Promise) {
    return decision.then((d) => {
      if (!d.allowed) refuse(d.retryAfterSeconds);
    });
  }
  if (!decision.allowed) refuse(decision.retryAfterSeconds);
  return undefined;
}

/** The limits of one edge, with its rules and its store (in memory, or shared between instances). */
export function requestLimits(
  store: RateLimitStore,
  rules: Pick<EdgeSettings, 'perIp' | 'perId'>,
  clientIp: (c: Context) => string | undefined,
): RequestLimits {
  const ipKeys = new Map<string, string>();
  /** `ip:<address>`, reusing one string per address so the bucket lookup hashes nothing new. */
  const ipKey = (address: string | undefined): string => {
    const ip = address ?? 'unknown';
    let key = ipKeys.get(ip);
    if (key === undefined) {
      key = `ip:${ip}`;
      if (ipKeys.size >= 10_000) ipKeys.clear();
      ipKeys.set(ip, key);
    }
    return key;
  };
  return {
    address: clientIp,
    client: (c, nowMs) =>
      rules.perIp === false ? undefined : take(store, ipKey(clientIp(c)), rules.perIp, nowMs),
    id: (key, nowMs) => take(store, key, rules.perId, nowMs),
  };
}

/** Step: the client's per-address bucket. */
export function limitClient(
  limits: RequestLimits,
): Step<{ readonly c: Context; readonly nowMs: number }> {
  return (request) => limits.client(request.c, request.nowMs);
}
