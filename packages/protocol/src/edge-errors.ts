/**
 * The edge's error contract: the code a failure carries beside its sentence, and the HTTP status
 * each code answers with. No imports, so the element can bundle it without pulling in zod.
 */

/**
 * Each error code and its status. Codes that share a status are listed most general first, so
 * a client that has only the status can read the first match (401 without a body means
 * `invalid`; an expired id always says so in its body).
 */
export const EDGE_ERROR_STATUS = {
  invalid: 401,
  expired: 401,
  forbidden: 403,
  not_found: 404,
  bad_request: 400,
  rate_limited: 429,
  backend: 502,
  timeout: 504,
} as const;

/** Error codes the edge adds beside `error` so a widget can react without parsing text. */
export type EdgeErrorCode = keyof typeof EDGE_ERROR_STATUS;

/** The body of every edge failure. */
export interface EdgeErrorBody {
  error: string;
  code?: EdgeErrorCode;
}
