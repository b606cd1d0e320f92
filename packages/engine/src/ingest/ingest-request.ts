import {
  DEFAULT_COLLECTION,
  describeZodError,
  expected,
  REQUIRED,
} from '@analytics-chart/protocol';
import * as z from 'zod';
import { EngineError } from '../engine-error.ts';
import type { IngestBatch } from '../storage/ingest-batch.ts';
import { CompactLineScanner, scanCompactText } from './compact-line.ts';
import { KeyDiscovery, MAX_EVENT_KEYS } from './discover-keys.ts';
import { BAD_TIMESTAMP, type Payload, TOO_WIDE, toPayload, toTimestamp } from './payload-checks.ts';

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

const timestampSchema = z
  .union([z.number(), z.string()], { error: 'expected Unix seconds' })
  .transform((v, ctx) => {
    const seconds = toTimestamp(v);
    if (seconds !== null) return seconds;
    ctx.addIssue({ code: 'custom', message: BAD_TIMESTAMP });
    return z.NEVER;
  })
  .nullish();

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

/** Payloads checked and their keys discovered, ready for a batch. */
interface CheckedPayloads {
  texts: string[];
  discovery: KeyDiscovery;
  /** How many of the first texts are in compact form (all of them, as clients send them). */
  compact?: number;
}

const payloadsSchema = z
  .array(z.unknown(), { error: expected('a list of JSON objects or strings') })
  .max(MAX_BULK_EVENTS, { error: `at most ${MAX_BULK_EVENTS} events per request` })
  .transform((values, ctx): CheckedPayloads => {
    const texts: string[] = [];
    const discovery = new KeyDiscovery();
    let compact = 0;
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      // Texts in compact form (what clients' JSON.stringify sends) are checked and their keys
      // found in one pass, without an object per value; the rest are parsed.
      if (typeof value === 'string' && scanCompactText(value, scanner)) {
        if (scanner.count > MAX_EVENT_KEYS) {
          ctx.addIssue({ code: 'custom', path: [i], message: TOO_WIDE });
          return z.NEVER;
        }
        discovery.addScanned(scanner);
        texts.push(value);
        if (compact === i) compact++;
        continue;
      }
      const payload = toPayload(value);
      if (typeof payload === 'string') {
        ctx.addIssue({ code: 'custom', path: [i], message: payload });
        return z.NEVER;
      }
      discovery.add(payload.json);
      texts.push(payload.payload);
    }
    return { texts, discovery, compact };
  });

const scanner = new CompactLineScanner();

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

/**
 * The batch to write to one collection, with its keys. Keys are discovered as the request is
 * parsed, so the parsed payload objects die with the request instead of waiting in the write
 * queue (objects that outlive a few allocations cost the garbage collector far more).
 */
function batch(
  collection: string | null | undefined,
  timestamp: number,
  { texts, discovery, compact = 0 }: CheckedPayloads,
): IngestBatch {
  return {
    collection: collection ?? DEFAULT_COLLECTION,
    records: texts.map((payload, i) =>
      i < compact ? { timestamp, payload, canonical: true } : { timestamp, payload },
    ),
    keys: discovery.keys,
  };
}

function parse<T>(schema: z.ZodType<T, unknown>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new EngineError(400, describeZodError(parsed.error));
  return parsed.data;
}

/** Validates a `/api/log` body (without `api_key`). `now` is the arrival time in Unix seconds. */
export function parseLogRequest(body: unknown, now: number): IngestBatch {
  const log = parse(logSchema, body);
  const discovery = new KeyDiscovery();
  discovery.add(log.json.json);
  const texts = [log.json.payload];
  return batch(log.collection, log.timestamp ?? Math.floor(now), { texts, discovery });
}

/** Validates a `/api/bulk-log` body (without `api_key`). */
export function parseBulkLogRequest(body: unknown, now: number): IngestBatch {
  const bulk = parse(bulkSchema, body);
  return batch(bulk.collection, bulk.timestamp ?? Math.floor(now), bulk.jsons);
}
