import {
  EDGE_ERROR_STATUS,
  type EdgeErrorBody,
  type EdgeErrorCode,
} from '@analytics-chart/protocol/edge-errors';

/** Why a chart could not be loaded: an edge error code, `network` when no response arrived, or `unknown`. */
export type ChartErrorCode = EdgeErrorCode | 'network' | 'unknown';

/** A failed load as a value, so the element can show it, fire it and decide whether to retry. */
export interface ChartLoadError {
  /** HTTP status, or 0 when the edge could not be reached. */
  status: number;
  /** The edge's own sentence when it sent one, otherwise ours. */
  message: string;
  code: ChartErrorCode;
  /** Seconds the edge asked us to wait (429 `Retry-After`). */
  retryAfter?: number;
}

/** Text shown in the error state for each code: short, for the person looking at the page. */
export const ERROR_TEXT: Record<ChartErrorCode, string> = {
  invalid: 'This chart link is not valid.',
  expired: 'This chart link has expired. Reload the page to see current data.',
  forbidden: 'You do not have access to this chart.',
  not_found: 'This chart does not exist.',
  bad_request: 'This chart could not be requested.',
  rate_limited: 'Too many requests. The chart will retry shortly.',
  backend: 'The analytics service is not answering right now.',
  timeout: 'The query took too long to run.',
  network: 'Cannot reach the chart server. Check your connection.',
  unknown: 'The chart could not be loaded.',
};

/**
 * Turns a failed HTTP response's status, body and `Retry-After` into a {@link ChartLoadError}. The
 * body's `code` wins; the status decides when the body is missing or not the edge's JSON.
 */
export function toChartLoadError(
  status: number,
  body: unknown,
  retryAfterHeader: string | null,
  now: number = Date.now(),
): ChartLoadError {
  const edge = isEdgeErrorBody(body) ? body : undefined;
  const code: ChartErrorCode =
    edge?.code && Object.hasOwn(EDGE_ERROR_STATUS, edge.code) ? edge.code : codeOfStatus(status);
  const error: ChartLoadError = { status, code, message: edge?.error || ERROR_TEXT[code] };
  const retryAfter = parseRetryAfter(retryAfterHeader, now);
  if (retryAfter !== undefined) error.retryAfter = retryAfter;
  return error;
}

/** The error for a request that got no response at all (DNS, refused, reset, offline). */
export function networkError(): ChartLoadError {
  return { status: 0, code: 'network', message: ERROR_TEXT.network };
}

/**
 * Whether a failure is worth retrying on its own with backoff: no response, or the edge could not
 * reach its backend. Time-outs are not: the same heavy query would time out again.
 */
export function isTransient(error: ChartLoadError): boolean {
  return error.code === 'network' || error.code === 'backend';
}

/** `Retry-After` as seconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(
  header: string | null,
  now: number = Date.now(),
): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * The code for a status when the body names none: the first code with that status, or `backend`
 * (retried) for any other 5xx, such as a gateway's 503 in front of the edge.
 */
function codeOfStatus(status: number): ChartErrorCode {
  for (const [code, codeStatus] of Object.entries(EDGE_ERROR_STATUS))
    if (codeStatus === status) return code as EdgeErrorCode;
  return status >= 500 ? 'backend' : 'unknown';
}

function isEdgeErrorBody(body: unknown): body is EdgeErrorBody {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as { error?: unknown }).error === 'string'
  );
}
