/**
 * A failure with the HTTP status it maps to and one clear sentence for the client. Everything the
 * engine refuses is an EngineError; anything else reaching the HTTP layer is our bug (500), and
 * its details are logged, never sent.
 */
export class EngineError extends Error {
  constructor(
    readonly status: 400 | 404 | 413 | 429 | 500 | 501 | 503 | 504,
    message: string,
  ) {
    super(message);
    this.name = 'EngineError';
  }
}

/** The answer to any query stopped at its time limit (504). */
export const QUERY_TIMED_OUT = 'Query timed out';
