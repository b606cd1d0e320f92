import type { EdgeSettings } from '../config/edge-config.ts';
import type { Step } from '../http/pipeline.ts';
import type { Logger } from '../log/logger.ts';
import type { CachedResult, ResultCache } from '../protection/result-cache.ts';
import type { ResolvedQuery } from '../registry/resolve-query.ts';
import type { SharedResults } from '../store/edge-store.ts';
import type { VerifiedId } from '../tokens/verified-ids.ts';
import type { Backend } from './backend.ts';
import { backendFailure } from './backend-failure.ts';
import { loadResult } from './load-result.ts';
import { sharedLoad } from './shared-load.ts';

/** What {@link fetchResult} needs: the cache, the backend and the cache settings. */
export interface FetchResultParts {
  cache: ResultCache;
  backend: Backend;
  settings: Pick<EdgeSettings, 'cacheTtl' | 'staleIfError'>;
  logger: Logger;
  /** Answers shared between replicas (the Redis store's), consulted on a local miss. */
  shared?: SharedResults | undefined;
}

/**
 * Step: the result of the request's query, from the cache while it is fresh (synchronously),
 * else from one backend call, at the request's clock, shared by every request waiting for the
 * same query. A failed call
 * falls back to a stale copy within its stale-if-error window, flagged `stale`.
 */
export function fetchResult(parts: FetchResultParts): Step<{
  readonly nowMs: number;
  readonly verified: VerifiedId;
  readonly query: ResolvedQuery;
  result: CachedResult;
  stale: boolean;
}> {
  const { cache, backend, settings, logger } = parts;
  return (request) => {
    const { nowMs, verified, query } = request;
    const fresh = cache.peek(query.cacheKey, nowMs);
    if (fresh) {
      request.result = fresh;
      return undefined;
    }
    const ttl = (verified.compiled.definition.cacheSeconds ?? settings.cacheTtl) * 1000;
    const staleMs = settings.staleIfError * 1000;
    const load =
      parts.shared && ttl > 0
        ? () =>
            sharedLoad(parts.shared as SharedResults, query.cacheKey, ttl, staleMs, () =>
              loadResult(backend, query, nowMs),
            )
        : () => loadResult(backend, query, nowMs);
    return cache.get(query.cacheKey, ttl, staleMs, load).then(
      (outcome) => {
        if (outcome.stale) {
          backendFailure(logger, outcome.error, verified.tag);
          logger.log({
            level: 'warn',
            event: 'data.stale',
            message: 'served a stale result because the backend failed',
            id: verified.tag,
          });
        }
        request.result = outcome.entry;
        request.stale = outcome.stale;
      },
      (error: unknown) => {
        throw backendFailure(logger, error, verified.tag);
      },
    );
  };
}
