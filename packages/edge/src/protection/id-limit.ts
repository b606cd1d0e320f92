import type { Context } from 'hono';
import type { Step } from '../http/pipeline.ts';
import type { VerifiedId } from '../tokens/verified-ids.ts';
import type { RequestLimits } from './request-limits.ts';

/**
 * The per-id bucket of a public id for one client address: a public id is shown to many viewers,
 * so each address has its own. The data route and the embed page share it.
 */
export function publicIdBucket(jti: string, address: string | undefined): string {
  return `id:${jti}:${address ?? 'unknown'}`;
}

/**
 * Step: the id's bucket. A session-bound id has one user, so one bucket; a public id is shown to
 * many viewers (a CMS page), so each client address gets its own bucket for it.
 */
export function limitId(
  limits: RequestLimits,
): Step<{ readonly c: Context; readonly nowMs: number; readonly verified: VerifiedId }> {
  return ({ c, nowMs, verified }) => {
    if (!verified.buckets) return limits.id(verified.bucket, nowMs);
    const ip = limits.address(c) ?? 'unknown';
    let key = verified.buckets.get(ip);
    if (key === undefined) {
      if (verified.buckets.size >= 1000) verified.buckets.clear();
      key = publicIdBucket(verified.claims.jti, ip);
      verified.buckets.set(ip, key);
    }
    return limits.id(key, nowMs);
  };
}
