import type { ChartPayload } from '@analytics-chart/protocol/chart-payload';
import { type ChartLoadError, networkError, toChartLoadError } from './chart-load-error.ts';

/** One data request: where, with which id and viewer option, and the validator of what we hold. */
export interface ChartDataRequest {
  /** The edge's base URL; the data route is `api/data` below it. */
  endpoint: string;
  queryId: string;
  /** A viewer-chosen range the definition allows, sent as `?range=`. */
  range?: string | undefined;
  /** ETag of the payload we already show, sent as `If-None-Match`. */
  etag?: string | undefined;
  credentials: RequestCredentials;
  signal: AbortSignal;
}

/** What a data request came back with; failures are values, only an abort throws. */
export type ChartDataResponse =
  | { kind: 'payload'; payload: ChartPayload; etag: string | undefined }
  | { kind: 'unchanged' }
  | { kind: 'error'; error: ChartLoadError };

/** `new URL(path, endpoint)` that treats the endpoint as a directory whether or not it ends in `/`. */
export function edgeUrl(endpoint: string, path: string, base: string = document.baseURI): URL {
  const dir = new URL(endpoint, base);
  if (!dir.pathname.endsWith('/')) dir.pathname += '/';
  dir.search = '';
  dir.hash = '';
  return new URL(path, dir);
}

/**
 * Fetches the chart payload for a query id. The id travels only in the `Authorization` header, never
 * in the URL, so it stays out of logs, history and referrers.
 */
export async function requestChartData(
  request: ChartDataRequest,
  fetchImpl: typeof fetch = fetch,
): Promise<ChartDataResponse> {
  const url = edgeUrl(request.endpoint, 'api/data');
  if (request.range) url.searchParams.set('range', request.range);
  const headers: Record<string, string> = {
    Accept: 'application/json',
    Authorization: `Bearer ${request.queryId}`,
  };
  // Same origin: ask for a 304 ourselves. Cross-origin, If-None-Match is not a CORS-safelisted
  // header and an edge need not allow it in its preflight, so the browser's HTTP cache does the
  // revalidation (the edge answers `private, no-cache`) and an equal ETag means unchanged.
  if (request.etag && url.origin === location.origin) headers['If-None-Match'] = request.etag;

  let response: Response;
  try {
    response = await fetchImpl(url, {
      headers,
      credentials: request.credentials,
      signal: request.signal,
      // Always revalidate: an expired or revoked id must fail now, not be answered from cache.
      cache: 'no-cache',
    });
  } catch (error) {
    if (request.signal.aborted) throw error;
    return { kind: 'error', error: networkError() };
  }
  if (response.status === 304) return { kind: 'unchanged' };

  let body: unknown;
  try {
    body = parseJson(await response.text());
  } catch (error) {
    // The body broke off mid-way: as much a network failure as no response at all.
    if (request.signal.aborted) throw error;
    return { kind: 'error', error: networkError() };
  }
  if (!response.ok) {
    return {
      kind: 'error',
      error: toChartLoadError(response.status, body, response.headers.get('Retry-After')),
    };
  }
  if (!isChartPayload(body)) {
    return {
      kind: 'error',
      error: {
        status: response.status,
        code: 'unknown',
        message: 'The chart server sent a response this chart cannot read.',
      },
    };
  }
  const etag = response.headers.get('ETag') ?? undefined;
  if (request.etag && etag === request.etag) return { kind: 'unchanged' };
  return { kind: 'payload', payload: body, etag };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A shape check, not a schema: enough that drawing cannot throw on a wrong body. The edge validates
 * properly; zod stays out of the browser bundle.
 */
export function isChartPayload(body: unknown): body is ChartPayload {
  if (typeof body !== 'object' || body === null) return false;
  const p = body as Partial<Record<keyof ChartPayload, unknown>>;
  return (
    typeof p.graph === 'string' &&
    typeof p.timeZone === 'string' &&
    Array.isArray(p.labels) &&
    Array.isArray(p.series) &&
    p.series.every(
      (s) =>
        typeof s === 'object' &&
        s !== null &&
        typeof (s as { name?: unknown }).name === 'string' &&
        Array.isArray((s as { values?: unknown }).values),
    ) &&
    (p.columns === undefined || Array.isArray(p.columns)) &&
    (p.rows === undefined || (Array.isArray(p.rows) && p.rows.every(Array.isArray)))
  );
}
