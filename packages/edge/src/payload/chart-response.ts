import type { Context } from 'hono';
import { entityTag } from '../http/entity-tag.ts';
import { etagMatches } from '../http/respond.ts';
import { API_SECURITY_HEADERS } from '../http/security-headers.ts';
import type { DataCors } from '../protection/data-cors.ts';
import type { CachedResult, PreparedBody } from '../protection/result-cache.ts';
import type { ResolvedQuery } from '../registry/resolve-query.ts';
import type { VerifiedId } from '../tokens/verified-ids.ts';
import { toChartPayload } from './to-chart-payload.ts';

/** A ready body with the headers of its 200 and 304 answers, built once per cached result. */
interface ReadyBody extends PreparedBody {
  headers: Readonly<Record<string, string>>;
  staleHeaders: Readonly<Record<string, string>>;
}

const encoder = new TextEncoder();

function headersFor(etag: string): ReadyBody['headers'] {
  return Object.freeze({
    ...API_SECURITY_HEADERS,
    'Content-Type': 'application/json; charset=utf-8',
    // The browser may keep a copy but must revalidate each time, so an expired or revoked id
    // stops working at once while an unchanged result costs only a 304. No `Vary: Authorization`
    // is needed: the ETag is the content's hash, so a 304 is right whichever id asked.
    'Cache-Control': 'private, no-cache',
    ETag: etag,
  });
}

/** The chart payload of a cached result for one definition, as bytes; built once per result. */
function readyBody(result: CachedResult, query: ResolvedQuery, verified: VerifiedId): ReadyBody {
  const { trimKey, definition } = verified.compiled;
  const existing = result.bodies.get(trimKey);
  if (existing) return existing as ReadyBody;
  const payload = toChartPayload(result.envelope, query.parsed, definition, {
    window: result.window,
    generatedAt: new Date(result.fetchedAt).toISOString(),
    expiresAt: new Date(result.freshUntil).toISOString(),
  });
  const bytes = encoder.encode(JSON.stringify(payload));
  const etag = entityTag(bytes);
  const headers = headersFor(etag);
  const body: ReadyBody = {
    bytes,
    etag,
    headers,
    staleHeaders: Object.freeze({ ...headers, 'X-Analytics-Stale': 'true' }),
  };
  result.bodies.set(trimKey, body);
  return body;
}

/**
 * The data route's answer: the chart payload (200), or a 304 when `If-None-Match` matches;
 * flagged `X-Analytics-Stale` when the result is a stale copy, with the CORS headers for the
 * request's origin when `cors` is set.
 */
export function sendChart(cors: DataCors | undefined) {
  return (request: {
    readonly c: Context;
    readonly verified: VerifiedId;
    readonly query: ResolvedQuery;
    readonly result: CachedResult;
    readonly stale: boolean;
  }): Response => {
    const { c } = request;
    const body = readyBody(request.result, request.query, request.verified);
    const ready = request.stale ? body.staleHeaders : body.headers;
    const headers = cors ? { ...ready, ...cors.headersFor(c.req.header('origin')) } : ready;
    const inm = c.req.header('if-none-match');
    if (inm && etagMatches(inm, body.etag)) return new Response(null, { status: 304, headers });
    return new Response(body.bytes, { status: 200, headers });
  };
}
