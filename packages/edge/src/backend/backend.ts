import {
  collectionsAnswerSchema,
  type Envelope,
  envelopeSchema,
  errorBodySchema,
  INVALID_API_KEY,
} from '@analytics-chart/protocol';

/**
 * A place queries run: the hosted service over HTTP, or the engine in the same process. The
 * backend alone holds the workspace key and adds it to each body; the edge never sees it.
 */
export interface Backend {
  /** Runs one request body (without `api_key`) and resolves to the envelope, or throws a {@link BackendError}. */
  query(body: Record<string, unknown>, signal?: AbortSignal): Promise<Envelope>;
  /**
   * The workspace's collection names (`POST /api/collections`), for checking a config against
   * the workspace; optional, since a host's own backend may have no such call.
   */
  collections?(signal?: AbortSignal): Promise<string[]>;
  /** Strings the edge's logger must scrub (the key). */
  readonly secrets?: readonly string[];
}

/**
 * Why a backend call failed: `key_rejected` (the service answered `Invalid API KEY`: a
 * configuration error, never retried), `timeout`, `unavailable` (network failure or 5xx),
 * `refused` (another 4xx, e.g. a query the service does not accept), `malformed` (a 2xx that is
 * not an envelope).
 */
export type BackendFailure = 'key_rejected' | 'timeout' | 'unavailable' | 'refused' | 'malformed';

/** A failed backend call. `detail` is for the operator's log (already free of the key). */
export class BackendError extends Error {
  override name = 'BackendError';
  readonly kind: BackendFailure;
  readonly status: number | undefined;

  constructor(kind: BackendFailure, detail: string, status?: number) {
    super(detail);
    this.kind = kind;
    this.status = status;
  }

  /** Whether trying again may help: time-outs, network failures and 5xx only. */
  get retryable(): boolean {
    return this.kind === 'timeout' || this.kind === 'unavailable';
  }
}

/** Interprets one answer of `POST /api/collections` as {@link readEnvelope} does the data endpoint's. */
export function readCollections(status: number, body: unknown): string[] {
  if (status >= 200 && status < 300) {
    const parsed = collectionsAnswerSchema.safeParse(body);
    if (!parsed.success) {
      throw new BackendError('malformed', 'the answer is not a list of collections', status);
    }
    return parsed.data.list.map((collection) => collection.name);
  }
  return readFailure(status, body);
}

/**
 * Interprets one answer of `POST /api/visualize/data` (status and parsed JSON body) the way the
 * spec tells clients to: 2xx must be an envelope; `Invalid API KEY` is a key problem whatever
 * the status; 408/504 are time-outs; other 5xx are outages; other failures are refusals whose
 * `error` sentence is kept for the log.
 */
export function readEnvelope(status: number, body: unknown): Envelope {
  if (status >= 200 && status < 300) {
    const parsed = envelopeSchema.safeParse(body);
    if (!parsed.success)
      throw new BackendError('malformed', 'the answer is not an envelope', status);
    return parsed.data;
  }
  return readFailure(status, body);
}

/** The error a failed answer (outside 2xx) stands for, thrown. */
function readFailure(status: number, body: unknown): never {
  const error = errorBodySchema.safeParse(body);
  const message = error.success ? error.data.error.slice(0, 300) : `HTTP ${status}`;
  if (error.success && error.data.error.trim() === INVALID_API_KEY) {
    throw new BackendError('key_rejected', INVALID_API_KEY, status);
  }
  if (status === 408 || status === 504) throw new BackendError('timeout', message, status);
  if (status >= 500) throw new BackendError('unavailable', message, status);
  throw new BackendError('refused', message, status);
}
