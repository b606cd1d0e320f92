/**
 * Revocation on Workers without a redeploy: `EDGE_REVOKED_IDS` is a var, so changing it means
 * deploying again, and `edge.revoke(jti)` reaches one isolate only. A Workers KV namespace is
 * read by every isolate; a revoked id is a key (its `jti`) in it.
 */

/** The part of a KV namespace binding the check uses (no Workers types needed). */
export interface RevocationNamespace {
  get(key: string): Promise<string | null>;
}

/**
 * An `isRevoked` hook that looks each id's `jti` up in a KV namespace (`createWorker` uses the
 * `EDGE_REVOCATIONS` binding by itself): revoke with
 * `npx wrangler kv key put --binding EDGE_REVOCATIONS <jti> revoked`. KV is eventually
 * consistent, so a revocation takes effect everywhere within about a minute. When KV cannot be
 * read, the edge fails the request (502, which the element retries) rather than serving an id
 * that may be revoked, as it does for any `isRevoked` hook that throws.
 */
export function kvRevocationCheck(
  namespace: RevocationNamespace,
): (jti: string) => Promise<boolean> {
  return async (jti) => (await namespace.get(jti)) !== null;
}
