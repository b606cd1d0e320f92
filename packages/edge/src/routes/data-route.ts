import type { Context } from 'hono';
import { type Admission, type AdmissionParts, routeAdmission } from '../admission/admission.ts';
import type { Backend } from '../backend/backend.ts';
import { fetchResult } from '../backend/fetch-result.ts';
import { pipeline, type Step } from '../http/pipeline.ts';
import { sendChart } from '../payload/chart-response.ts';
import type { DataCors } from '../protection/data-cors.ts';
import { type CachedResult, ResultCache } from '../protection/result-cache.ts';
import { resolveForViewer } from '../registry/resolve-for-viewer.ts';
import type { ResolvedQuery } from '../registry/resolve-query.ts';
import type { EdgeStore } from '../store/edge-store.ts';
import type { VerifiedId } from '../tokens/verified-ids.ts';

/**
 * One data request as its steps fill it in: the admission's fields (context, clock, verified id,
 * session, ticket), then the resolved query and the result, each set by the step that finds it.
 */
interface DataRequest extends Admission {
  query: ResolvedQuery;
  result: CachedResult;
  stale: boolean;
}

/** What the data route is built from. */
export interface DataRouteParts extends AdmissionParts {
  backend: Backend;
  /** Counts views of each id for the registry. */
  store: EdgeStore;
  /** With it, every answer carries the CORS headers for the request's origin. */
  cors?: DataCors | undefined;
  /** The CORS of the embed page's own data requests (`framed`), which may come from `null`. */
  framedCors: DataCors;
}

/**
 * `GET /api/data`: the shared admission steps, then the query's, in order, then the chart
 * payload. The common case (a remembered id, a fresh cached result, in-memory limits) runs
 * synchronously: no HMAC, no await. Every refusal throws (or rejects with) an `EdgeError`.
 * `framed` answers `GET /embed-data/<ticket>/api/data`, the embed page's own data requests,
 * with the same steps and the page's ticket.
 */
export function dataRoute(parts: DataRouteParts) {
  const { settings, logger } = parts;
  const admission = routeAdmission<DataRequest>(parts, { event: 'data.denied' });
  const cache = new ResultCache(settings.cacheEntries);

  const steps: Step<DataRequest>[] = [
    admission.limitClient,
    ...admission.admitId,
    admission.limitId,
    admission.checkAudience,
    admission.checkSession,
    resolveForViewer(admission.deny),
    countView(parts.store),
    fetchResult({
      cache,
      backend: parts.backend,
      settings,
      logger,
      shared: parts.store.results,
    }),
  ];
  const run = pipeline<DataRequest, Response>(steps, sendChart(parts.cors));
  const runFramed = pipeline<DataRequest, Response>(steps, sendChart(parts.framedCors));

  // The later fields start empty; each step reads only what an earlier step has set.
  const request = (c: Context, ticket: string | undefined) =>
    ({
      c,
      nowMs: Date.now(),
      verified: undefined,
      session: undefined,
      ticket,
      query: undefined,
      result: undefined,
      stale: false,
    }) as unknown as DataRequest;

  return {
    handle: (c: Context) => run(request(c, undefined)),
    framed: (c: Context) => runFramed(request(c, c.req.param('ticket'))),
    clear: () => {
      cache.clear();
      admission.ids.clear();
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
