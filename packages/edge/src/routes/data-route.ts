import type { Context } from 'hono';
import type { Backend } from '../backend/backend.ts';
import { fetchResult } from '../backend/fetch-result.ts';
import type { EdgeSettings } from '../config/edge-config.ts';
import { type Deny, denier } from '../http/deny.ts';
import { pipeline, type Step } from '../http/pipeline.ts';
import type { Logger } from '../log/logger.ts';
import { sendChart } from '../payload/chart-response.ts';
import { checkAudience } from '../protection/audience.ts';
import type { DataCors } from '../protection/data-cors.ts';
import { limitId } from '../protection/id-limit.ts';
import { limitClient, type RequestLimits } from '../protection/request-limits.ts';
import { type CachedResult, ResultCache } from '../protection/result-cache.ts';
import { type Revocation, refuseRevoked } from '../protection/revocation.ts';
import type { CompiledDefinition } from '../registry/compile-definition.ts';
import { resolveForViewer } from '../registry/resolve-for-viewer.ts';
import type { ResolvedQuery } from '../registry/resolve-query.ts';
import { checkSession, type ReadSession } from '../session/session-check.ts';
import type { EdgeStore } from '../store/edge-store.ts';
import type { Keyring } from '../tokens/keyring.ts';
import { type VerifiedId, verifiedIds, verifyId } from '../tokens/verified-ids.ts';

/**
 * One data request as its steps fill it in: the context and the clock reading every step uses,
 * then the verified id, the resolved query and the result, each set by the step that finds it.
 */
interface DataRequest {
  readonly c: Context;
  readonly nowMs: number;
  verified: VerifiedId;
  query: ResolvedQuery;
  result: CachedResult;
  stale: boolean;
}

/** What the data route is built from. */
export interface DataRouteParts {
  settings: EdgeSettings;
  logger: Logger;
  keyring: Keyring;
  registry: ReadonlyMap<string, CompiledDefinition>;
  backend: Backend;
  limits: RequestLimits;
  revocation: Revocation;
  readSession: ReadSession;
  /** Counts views of each id for the registry. */
  store: EdgeStore;
  /** With it, every answer carries the CORS headers for the request's origin. */
  cors?: DataCors | undefined;
}

/**
 * `GET /api/data`: the steps below, in order, then the chart payload. The common case (a
 * remembered id, a fresh cached result, in-memory limits) runs synchronously: no HMAC, no await.
 * Every refusal throws (or rejects with) an `EdgeError`.
 */
export function dataRoute(parts: DataRouteParts) {
  const { settings, logger } = parts;
  const deny: Deny = denier(logger, 'data.denied');
  const ids = verifiedIds({ ...parts, deny });
  const cache = new ResultCache(settings.cacheEntries);

  const run = pipeline<DataRequest, Response>(
    [
      limitClient(parts.limits),
      verifyId(ids),
      refuseRevoked(parts.revocation, deny),
      limitId(parts.limits),
      checkAudience(deny),
      checkSession(parts.readSession, deny),
      resolveForViewer(deny),
      countView(parts.store),
      fetchResult({
        cache,
        backend: parts.backend,
        settings,
        logger,
        shared: parts.store.results,
      }),
    ],
    sendChart(parts.cors),
  );

  return {
    handle: (c: Context) =>
      // The later fields start empty; each step reads only what an earlier step has set.
      run({
        c,
        nowMs: Date.now(),
        verified: undefined,
        query: undefined,
        result: undefined,
        stale: false,
      } as unknown as DataRequest),
    clear: () => {
      cache.clear();
      ids.clear();
    },
  };
}

/** Step: the registry's view count and last-seen time (counted in memory, never awaited). */
function countView(
  store: EdgeStore,
): Step<{ readonly nowMs: number; readonly verified: VerifiedId }> {
  return ({ nowMs, verified }) => {
    store.seen(verified.claims.jti, nowMs);
  };
}
