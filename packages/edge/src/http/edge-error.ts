import { EDGE_ERROR_STATUS, type EdgeErrorCode } from '@analytics-chart/protocol/edge-errors';

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
    this.status = options.status ?? EDGE_ERROR_STATUS[code];
    this.retryAfter = options.retryAfter;
  }
}
