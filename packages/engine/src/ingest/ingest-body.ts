import { INVALID_API_KEY } from '@analytics-chart/protocol';
import { EngineError } from '../engine-error.ts';
import type { IngestBatch } from '../storage/ingest-batch.ts';
import { parseBulkLogRequest, parseLogRequest } from './ingest-request.ts';
import { describeBadUtf8, strictUtf8 } from './strict-utf8.ts';

/**
 * A request body from its bytes to what the engine needs of it, as one pure function run on the
 * main thread for small bodies and in the body workers for large ones (`body-parsers.ts`), so
 * that both answer the same checks with the same words.
 */

/** The ingest endpoints whose bodies may be parsed off the main thread. */
export type IngestKind = 'log' | 'bulk-log';

/** A body read as JSON, or why it cannot be (the HTTP app's 400 for every route). */
export type JsonBody = { body: unknown } | { refused: string };

/** Decodes well-formed UTF-8 bytes and parses them as JSON. */
export function decodeJsonBody(bytes: Uint8Array): JsonBody {
  const text = strictUtf8(bytes);
  if (text === null) return { refused: describeBadUtf8(bytes, 'request body') };
  try {
    return { body: JSON.parse(text) };
  } catch {
    return { refused: 'request body: is not valid JSON' };
  }
}

/**
 * What an ingest body holds: refused before anything else (not UTF-8, not JSON), or what
 * authentication reads (`{ api_key }`, or null for a body that is not an object) with the
 * checked batch or why the request is invalid, which is answered only once the key is good.
 */
export type IngestBody =
  | { refused: string }
  | { auth: unknown; batch: IngestBatch }
  | { auth: unknown; invalid: string };

/** Decodes, parses and checks the body of `/api/log` or `/api/bulk-log`, arrived at `now`. */
export function parseIngestBody(kind: IngestKind, bytes: Uint8Array, now: number): IngestBody {
  const decoded = decodeJsonBody(bytes);
  if ('refused' in decoded) return decoded;
  const { body } = decoded;
  // Authentication refuses a body that is not an object: nothing of it needs to travel.
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { auth: null, invalid: INVALID_API_KEY };
  }
  const { api_key, ...request } = body as Record<string, unknown>;
  const auth = { api_key };
  try {
    const batch =
      kind === 'log' ? parseLogRequest(request, now) : parseBulkLogRequest(request, now);
    return { auth, batch };
  } catch (error) {
    if (error instanceof EngineError) return { auth, invalid: error.message };
    throw error;
  }
}
