import type { QueryIdClaims } from '../tokens/query-id-claims.ts';
import type { EdgeStore, IssuedId } from './edge-store.ts';

/** The registry entry of freshly signed claims. */
export function issuedIdOf(
  claims: QueryIdClaims,
  mintedBy: string,
  label: string | undefined,
): IssuedId {
  const title = (claims.d as { title?: unknown } | undefined)?.title;
  return {
    jti: claims.jti,
    query: claims.q,
    title: typeof title === 'string' ? title : undefined,
    params: { ...(claims.p ?? {}) },
    aud: claims.aud,
    label,
    public: claims.pub === true,
    mintedBy,
    // The recording instant, in milliseconds: `iat` has whole seconds, too coarse to order by.
    issuedAt: new Date(Math.max(Date.now(), claims.iat * 1000)).toISOString(),
    expiresAt: new Date(claims.exp * 1000).toISOString(),
    revokedAt: undefined,
    lastSeenAt: undefined,
    views: 0,
  };
}

/** Records what was signed; rejects (e.g. `StoreUnavailableError`) when the store cannot. */
export function recordIssued(
  store: EdgeStore,
  claims: QueryIdClaims,
  mintedBy: string,
  label?: string,
): Promise<void> {
  return store.record(issuedIdOf(claims, mintedBy, label));
}
