import type { Deny } from '../http/deny.ts';
import { EdgeError } from '../http/edge-error.ts';
import type { Step } from '../http/pipeline.ts';
import type { Logger } from '../log/logger.ts';
import { type EdgeStore, StoreUnavailableError } from '../store/edge-store.ts';
import type { VerifiedId } from '../tokens/verified-ids.ts';

/** Revoked ids: the edge's own list, and the host's `isRevoked` hook when it has one. */
export interface Revocation {
  /**
   * Whether an id is revoked. Synchronous without a hook, so the data route's hot path pays no
   * await. A hook that throws means the list could not be read: a 502 and a log line, never a
   * silent "not revoked".
   */
  isRevoked(jti: string): boolean | Promise<boolean>;
  /**
   * Revokes an id at once in this process, also one already remembered as verified; resolves
   * once the store (and so every replica sharing it) has it.
   */
  revoke(jti: string): Promise<void>;
}

/** Retry-After of the 503 a stale revocation list answers: the store reconnects within it. */
const STORE_RETRY_SECONDS = 1;

/**
 * The revocation list of one edge: `revokedIds` from the config and `revoke` calls, then the
 * store's list (shared by replicas when the store is), then the hook. A store that cannot vouch
 * for its list fails the request closed: a 503 and one `store.unavailable` line from the store.
 */
export function revocationList(
  revokedIds: Iterable<string>,
  hook: ((jti: string) => boolean | Promise<boolean>) | undefined,
  logger: Logger,
  store: EdgeStore,
): Revocation {
  const revoked = new Set(revokedIds);
  return {
    revoke: (jti) => {
      revoked.add(jti);
      return store.revoke(jti, Date.now());
    },
    isRevoked(jti) {
      if (revoked.has(jti)) return true;
      try {
        if (store.isRevoked(jti)) return true;
      } catch (error) {
        if (!(error instanceof StoreUnavailableError)) throw error;
        throw new EdgeError('backend', 'This chart could not be checked; try again shortly.', {
          status: 503,
          retryAfter: STORE_RETRY_SECONDS,
        });
      }
      if (!hook) return false;
      const failed = (error: unknown): never => {
        logger.log({
          level: 'error',
          event: 'revocation.check_failed',
          message: `The revocation hook failed: ${(error as Error)?.message ?? String(error)}`,
        });
        throw new EdgeError('backend', 'This chart could not be checked; try again shortly.');
      };
      let answer: boolean | Promise<boolean>;
      try {
        answer = hook(jti);
      } catch (error) {
        return failed(error);
      }
      // A hook that knows at once (a remembered answer) keeps the request synchronous.
      if (!(answer instanceof Promise)) return Boolean(answer);
      return answer.then(Boolean, failed);
    },
  };
}

/** Step: a revoked id is refused as invalid, like a forged one, in the route's `invalid` words. */
export function refuseRevoked(
  revocation: Revocation,
  deny: Deny,
  message = 'The query id is not valid.',
): Step<{ readonly verified: VerifiedId }> {
  return ({ verified }) => {
    const revoked = revocation.isRevoked(verified.claims.jti);
    if (revoked === false) return undefined;
    if (revoked === true) deny('invalid', message, verified.tag, 'revoked');
    return revoked.then((yes) => {
      if (yes) deny('invalid', message, verified.tag, 'revoked');
    });
  };
}
