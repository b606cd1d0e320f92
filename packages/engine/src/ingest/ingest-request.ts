import {
  DEFAULT_COLLECTION,
  describeZodError,
  expected,
  REQUIRED,
} from '@analytics-chart/protocol';
import { z } from 'zod';
import { EngineError } from '../engine-error.ts';
import { type EventRecord, MAX_TIMESTAMP } from './event-records.ts';

/**
 * The ingest bodies as the hosted service's clients send them (api_key aside, unknown keys
 * ignored): `POST /api/log` `{collection?, json, timestamp?}` and `POST /api/bulk-log`
 * `{collection?, timestamp?, jsons}`. `json` is an object or a string holding one; a string is
 * stored exactly as sent, an object in compact form. `timestamp` is Unix seconds (a number or a
 * digit string, fractions dropped); without it, the time of arrival.
 */

/** Events one bulk-log request may carry. */
export const MAX_BULK_EVENTS = 10_000;

const collectionSchema = z
  .string({ error: 'expected a collection name as a string' })
  .trim()
  .min(1, { error: 'expected a non-empty collection name' })
  .max(200, { error: 'collection name is longer than 200 characters' })
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  .refine((s) => !/[\u0000-\u001f]/.test(s), {
    error: 'collection name contains control characters',
  })
  .nullish();

/** Why a timestamp is refused. */
export const BAD_TIMESTAMP = `expected Unix seconds (a number from 0 to ${MAX_TIMESTAMP})`;

/** Whole Unix seconds from a number or a digit string (fractions dropped), or null. */
export function toTimestamp(value: unknown): number | null {
  if (typeof value === 'number' && value >= 0 && value <= MAX_TIMESTAMP) return Math.floor(value);
  const seconds =
    typeof value === 'number' || (typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value))
      ? Number(value)
      : Number.NaN;
  return Number.isFinite(seconds) && seconds >= 0 && seconds <= MAX_TIMESTAMP
    ? Math.floor(seconds)
    : null;
}

const timestampSchema = z
  .union([z.number(), z.string()], { error: 'expected Unix seconds' })
  .transform((v, ctx) => {
    const seconds = toTimestamp(v);
    if (seconds !== null) return seconds;
    ctx.addIssue({ code: 'custom', message: BAD_TIMESTAMP });
    return z.NEVER;
  })
  .nullish();

/** A validated payload: its text as it will be stored, and the object it holds. */
export interface Payload {
  payload: string;
  json: Record<string, unknown>;
}

const NOT_AN_OBJECT = 'expected a JSON object, or a string holding one';

/**
 * Checks one payload: an object (stored in compact form) or a string holding a JSON object
 * (stored exactly as sent). A plain function rather than a zod schema: bulk requests run it
 * thousands of times per request.
 */
export function toPayload(value: unknown): Payload | string {
  let payload: Payload;
  if (typeof value === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      return 'is not valid JSON';
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return NOT_AN_OBJECT;
    }
    payload = { payload: value, json: parsed as Record<string, unknown> };
  } else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    payload = { payload: JSON.stringify(value), json: value as Record<string, unknown> };
  } else return NOT_AN_OBJECT;
  // JavaScript accepts half a surrogate pair ("\ud800"); it is not Unicode, and DuckDB refuses it.
  if (SURROGATE.test(payload.payload) && hasLoneSurrogate(payload.json)) {
    return 'contains half a UTF-16 surrogate pair, which is not valid Unicode';
  }
  return payload;
}

const SURROGATE = /\\u[dD][89a-fA-F]|[\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  for (const [key, item] of Object.entries(value)) {
    if (LONE_SURROGATE.test(key) || hasLoneSurrogate(item)) return true;
  }
  return false;
}

const payloadSchema = z.unknown().transform((value, ctx): Payload => {
  if (value === undefined) {
    ctx.addIssue({ code: 'custom', message: REQUIRED });
    return z.NEVER;
  }
  const payload = toPayload(value);
  if (typeof payload === 'string') {
    ctx.addIssue({ code: 'custom', message: payload });
    return z.NEVER;
  }
  return payload;
});

const payloadsSchema = z
  .array(z.unknown(), { error: expected('a list of JSON objects or strings') })
  .max(MAX_BULK_EVENTS, { error: `at most ${MAX_BULK_EVENTS} events per request` })
  .transform((values, ctx): Payload[] => {
    const out: Payload[] = [];
    for (let i = 0; i < values.length; i++) {
      const payload = toPayload(values[i]);
      if (typeof payload === 'string') {
        ctx.addIssue({ code: 'custom', path: [i], message: payload });
        return z.NEVER;
      }
      out.push(payload);
    }
    return out;
  });

const logSchema = z.object({
  collection: collectionSchema,
  json: payloadSchema,
  timestamp: timestampSchema,
});

const bulkSchema = z.object({
  collection: collectionSchema,
  timestamp: timestampSchema,
  jsons: payloadsSchema,
});

/** Events to write to one collection. */
export interface IngestBatch {
  collection: string;
  records: EventRecord[];
}

function parse<T>(schema: z.ZodType<T, unknown>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new EngineError(400, describeZodError(parsed.error));
  return parsed.data;
}

/** Validates a `/api/log` body (without `api_key`). `now` is the arrival time in Unix seconds. */
export function parseLogRequest(body: unknown, now: number): IngestBatch {
  const log = parse(logSchema, body);
  return {
    collection: log.collection ?? DEFAULT_COLLECTION,
    records: [{ timestamp: log.timestamp ?? Math.floor(now), ...log.json }],
  };
}

/** Validates a `/api/bulk-log` body (without `api_key`). */
export function parseBulkLogRequest(body: unknown, now: number): IngestBatch {
  const bulk = parse(bulkSchema, body);
  const timestamp = bulk.timestamp ?? Math.floor(now);
  return {
    collection: bulk.collection ?? DEFAULT_COLLECTION,
    records: bulk.jsons.map((payload) => ({ timestamp, ...payload })),
  };
}
