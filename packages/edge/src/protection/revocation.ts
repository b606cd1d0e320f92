import type { Deny } from '../http/deny.ts';
import { EdgeError } from '../http/edge-error.ts';
import type { Step } from '../http/pipeline.ts';
import type { Logger } from '../log/logger.ts';
import type { VerifiedId } from '../tokens/verified-ids.ts';

/** Revoked ids: the edge's own list, and the host's `isRevoked` hook when it has one. */
export interface Revocation {
  /**
   * Whether an id is revoked. Synchronous without a hook, so the data route's hot path pays no
   * await. A hook that throws means the list could not be read: a 502 and a log line, never a
   * silent "not revoked".
   */
  isRevoked(jti: string): boolean | Promise<boolean>;
  /** Revokes an id at once, also one already remembered as verified. */
  revoke(jti: string): void;
}

/** The revocation list of one edge: `revokedIds` from the config, then `revoke` calls, then the hook. */
export function revocationList(
  revokedIds: Iterable<string>,
  hook: ((jti: string) => boolean | Promise<boolean>) | undefined,
  logger: Logger,
): Revocation {
  const revoked = new Set(revokedIds);
  return {
    revoke: (jti) => {
      revoked.add(jti);
    },
    isRevoked(jti) {
      if (revoked.has(jti)) return true;
      if (!hook) return false;
      return (async () => {
        try {
          return Boolean(await hook(jti));
        } catch (error) {
          logger.log({
            level: 'error',
            event: 'revocation.check_failed',
            message: `The revocation hook failed: ${(error as Error)?.message ?? String(error)}`,
          });
          throw new EdgeError('backend', 'This chart could not be checked; try again shortly.');
        }
      })();
    },
  };
}

/** Step: a revoked id is refused as invalid, like a forged one. */
export function refuseRevoked(
  revocation: Revocation,
  deny: Deny,
): Step<{ readonly verified: VerifiedId }> {
  return ({ verified }) => {
    const revoked = revocation.isRevoked(verified.claims.jti);
    if (revoked === false) return undefined;
    if (revoked === true) deny('invalid', 'The query id is not valid.', verified.tag, 'revoked');
    return revoked.then((yes) => {
      if (yes) deny('invalid', 'The query id is not valid.', verified.tag, 'revoked');
    });
  };
}
