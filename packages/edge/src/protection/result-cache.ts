import type { Envelope } from '@analytics-chart/protocol';
import { Lru } from './lru.ts';

/** A response body ready to send, with its entity tag. */
export interface PreparedBody {
  bytes: Uint8Array<ArrayBuffer>;
  etag: string;
}

/** One cached backend answer for one resolved query. */
export interface CachedResult {
  envelope: Envelope;
  /** The query's resolved window, when it has one. */
  window: { start: number; end: number } | undefined;
  /** Milliseconds since the epoch. */
  fetchedAt: number;
  freshUntil: number;
  staleUntil: number;
  /** Trimmed bodies by definition trim key: several definitions can share one resolved query. */
  bodies: Map<string, PreparedBody>;
}

/** What a load returns: the envelope and the window it covers. */
export interface LoadedResult {
  envelope: Envelope;
  window: { start: number; end: number } | undefined;
  /** When the answer was fetched, if earlier than now (another replica's load). */
  fetchedAt?: number;
}

/** A lookup's outcome: the entry, and whether it is a stale copy served because the load failed. */
export interface CacheOutcome {
  entry: CachedResult;
  stale: boolean;
  /** The failure that made a stale copy necessary. */
  error?: unknown;
}

/**
 * Backend answers keyed by the resolved query (never by the token), with single-flight loading:
 * N concurrent misses for one key share one backend call. A failed refresh falls back to the
 * previous answer while it is within its stale-if-error window.
 */
export class ResultCache {
  readonly #entries: Lru<string, CachedResult>;
  readonly #inflight = new Map<string, Promise<CachedResult>>();
  readonly #now: () => number;

  constructor(maxEntries: number, now: () => number = Date.now) {
    this.#entries = new Lru(maxEntries);
    this.#now = now;
  }

  /** The entry when it is fresh at `nowMs` (the request's clock): the synchronous hot path. */
  peek(key: string, nowMs: number = this.#now()): CachedResult | undefined {
    const entry = this.#entries.get(key);
    return entry && nowMs < entry.freshUntil ? entry : undefined;
  }

  /**
   * The fresh entry, or the result of one shared load. `ttlMs` and `staleMs` apply to the entry a
   * load creates.
   */
  async get(
    key: string,
    ttlMs: number,
    staleMs: number,
    load: () => Promise<LoadedResult>,
  ): Promise<CacheOutcome> {
    const previous = this.#entries.get(key);
    if (previous && this.#now() < previous.freshUntil) return { entry: previous, stale: false };
    let pending = this.#inflight.get(key);
    if (!pending) {
      pending = load().then((loaded) => {
        const fetchedAt = loaded.fetchedAt ?? this.#now();
        const entry: CachedResult = {
          envelope: loaded.envelope,
          window: loaded.window,
          fetchedAt,
          freshUntil: fetchedAt + ttlMs,
          staleUntil: fetchedAt + ttlMs + staleMs,
          bodies: new Map(),
        };
        if (ttlMs > 0 || staleMs > 0) this.#entries.set(key, entry);
        return entry;
      });
      const settled = pending.finally(() => this.#inflight.delete(key));
      settled.catch(() => {});
      this.#inflight.set(key, pending);
    }
    try {
      return { entry: await pending, stale: false };
    } catch (error) {
      if (previous && this.#now() < previous.staleUntil)
        return { entry: previous, stale: true, error };
      throw error;
    }
  }

  /** Forgets every entry (tests, operators after a data fix). */
  clear(): void {
    this.#entries.clear();
  }
}
