import type { ParamValue } from '@analytics-chart/protocol';
import type { RateLimitStore } from '../protection/rate-limit.ts';
import type { LoadedResult } from '../protection/result-cache.ts';

/** One minted id as the registry keeps it. Times are ISO instants. */
export interface IssuedId {
  jti: string;
  /** The registry query it names, or undefined for an inline definition. */
  query: string | undefined;
  /** The inline definition's title, when the id carries its definition. */
  title: string | undefined;
  params: Record<string, ParamValue>;
  aud: string | string[] | undefined;
  /** Plain text the minter chose; never HTML (control characters and `<` `>` are refused). */
  label: string | undefined;
  public: boolean;
  /** Who minted it: the session's subject, or `cli`. */
  mintedBy: string;
  issuedAt: string;
  expiresAt: string;
  revokedAt: string | undefined;
  lastSeenAt: string | undefined;
  /** Approximate: replicas add their counts about once a second. */
  views: number;
}

/** Which registry entries a list returns. */
export interface IssuedIdFilter {
  /** Only the ids recorded with this `mintedBy`. */
  mintedBy?: string;
}

/** A page of the registry, newest first; `next` is the cursor of the following page. */
export interface IssuedIdPage {
  items: IssuedId[];
  next: string | undefined;
}

/**
 * Thrown when the shared store cannot answer in time. Revocation checks turn it into a 503
 * (fail closed); rate limits and the registry's view counts fall back as the README says.
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}

/**
 * The edge's state: revoked ids, the registry of minted ids, and rate-limit buckets. One
 * interface so a single process (memory) and several replicas (Redis) run the same routes.
 */
export interface EdgeStore {
  /** `memory` (this process only) or `redis` (shared by every replica). */
  readonly kind: string;
  /**
   * Whether an id is revoked, answered from this process's copy of the shared list so the data
   * route pays no round trip. Throws {@link StoreUnavailableError} while that copy may be stale.
   */
  isRevoked(jti: string): boolean;
  /** Revokes an id everywhere; resolves once the shared store has it. */
  revoke(jti: string, nowMs: number): Promise<void>;
  /** Records a minted id. */
  record(id: IssuedId): Promise<void>;
  /** One id, or null when the registry has none by that jti (or it expired). */
  get(jti: string): Promise<IssuedId | null>;
  /**
   * Newest first, `limit` at a time; with `mintedBy`, only the ids that minter recorded, read
   * from an index of their own so a minter's oldest id is as reachable as the registry's newest.
   */
  list(cursor: string | undefined, limit: number, filter?: IssuedIdFilter): Promise<IssuedIdPage>;
  /** Notes a view; counted in memory and written later, never awaited by a request. */
  seen(jti: string, nowMs: number): void;
  /** A result cache shared between replicas, when the store has one (Redis does). */
  readonly results?: SharedResults | undefined;
  /** Rate-limit buckets shared as widely as the store is. */
  readonly rateLimits: RateLimitStore;
  /** Stops timers and closes connections. */
  close(): Promise<void>;
}

/** A backend answer as replicas share it: what was loaded, and when. */
export interface SharedResult extends LoadedResult {
  fetchedAt: number;
}

/**
 * Backend answers shared between replicas, and a lock so that one replica loads while the
 * others wait for its answer. Every method may reject with {@link StoreUnavailableError}.
 */
export interface SharedResults {
  read(key: string): Promise<SharedResult | undefined>;
  /** Keeps `result` for `keepMs` (its freshness plus its stale-if-error window). */
  write(key: string, result: SharedResult, keepMs: number): Promise<void>;
  /** Takes the load lock of `key` for at most `ttlMs`; false when another replica holds it. */
  lock(key: string, ttlMs: number): Promise<boolean>;
  unlock(key: string): Promise<void>;
}

/** Refuses labels that could break a page or a terminal: control, bidi and `<` `>` characters. */
export const LABEL_PATTERN = /^[^\p{Cc}\u202A-\u202E\u2066-\u2069<>]{1,200}$/u;

/** What a jti looks like (`newJti`: base64url); anything else is refused before any lookup. */
export const JTI_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;
