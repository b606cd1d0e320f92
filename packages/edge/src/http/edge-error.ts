import type { EdgeErrorCode } from '@analytics-chart/protocol/chart-payload';

/** The HTTP status that goes with each error code; the one place codes become statuses. */
export const STATUS_OF: Record<EdgeErrorCode, number> = {
  invalid: 401,
  expired: 401,
  forbidden: 403,
  not_found: 404,
  bad_request: 400,
  rate_limited: 429,
  backend: 502,
  timeout: 504,
};

/**
 * A failure the viewer may see: a code, one sentence, and the status (from the code unless
 * given, e.g. 413 for an oversized body). The message is written for the viewer; details for the
 * operator go to the log, never into the response.
 */
export class EdgeError extends Error {
  readonly code: EdgeErrorCode;
  readonly status: number;
  readonly retryAfter: number | undefined;

  constructor(
    code: EdgeErrorCode,
    message: string,
    options: { status?: number; retryAfter?: number } = {},
  ) {
    super(message);
    this.name = 'EdgeError';
    this.code = code;
    this.status = options.status ?? STATUS_OF[code];
    this.retryAfter = options.retryAfter;
  }
}
