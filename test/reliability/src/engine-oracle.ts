/**
 * Whether the engine must accept a request body, written from the documented contract (engine
 * README "Storage" and "Semantics", docs/query-semantics.md "Ingest") and not from the engine's code: the fuzzer
 * compares every answer with it.
 */
import { nestingDepth } from './fuzz-ledger.ts';

/** The last Unix second the engine stores (9999-12-31T23:59:59Z). */
export const MAX_TIMESTAMP = 253_402_300_799;

/** At most this many events in one bulk-log request. */
export const MAX_BULK_EVENTS = 10_000;

/** How deeply a payload may nest objects and arrays, the payload itself being level 1. */
export const MAX_PAYLOAD_NESTING = 256;

/** At most this many key paths in one event: every key of every object down to six levels. */
export const MAX_EVENT_KEYS = 1000;
const KEY_DEPTH = 6;

/** The body as the server reads it: well-formed UTF-8 (anything else is refused), then JSON. */
export function readBody(bytes: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) };
  } catch {
    return { ok: false };
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function has(body: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(body, key) ? body[key] : undefined;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether any string or key in the value holds half a surrogate pair (not Unicode). */
function hasLoneSurrogate(value: unknown): boolean {
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return true;
    } else if (typeof v === 'object' && v !== null) {
      for (const [key, item] of Object.entries(v)) {
        if (LONE_SURROGATE.test(key)) return true;
        stack.push(item);
      }
    }
  }
  return false;
}

/** Whether a number anywhere in the value lies beyond the doubles (JSON.parse reads it as ±Infinity). */
function hasNonFinite(value: unknown): boolean {
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'number' && !Number.isFinite(v)) return true;
    if (typeof v === 'object' && v !== null) stack.push(...Object.values(v));
  }
  return false;
}

/** The key paths of an object as the contract counts them: object keys down to six levels, not inside arrays. */
function keyPaths(object: Record<string, unknown>, depth = 1): number {
  let count = 0;
  for (const value of Object.values(object)) {
    count++;
    if (depth < KEY_DEPTH && isObject(value)) count += keyPaths(value, depth + 1);
  }
  return count;
}

/**
 * A payload: an object, or a string holding a JSON object; either way without half surrogate
 * pairs, which are not Unicode (the engine refuses them since its storage needs UTF-8), nested
 * at most MAX_PAYLOAD_NESTING levels deep, with no number beyond the doubles and at most
 * MAX_EVENT_KEYS key paths.
 */
function validPayload(value: unknown): boolean {
  let object: unknown = value;
  if (typeof value === 'string') {
    try {
      object = JSON.parse(value);
    } catch {
      return false;
    }
  }
  return (
    isObject(object) &&
    !hasLoneSurrogate(object) &&
    nestingDepth(object) <= MAX_PAYLOAD_NESTING &&
    !hasNonFinite(object) &&
    keyPaths(object) <= MAX_EVENT_KEYS
  );
}

/** Absent or null, a number in 0 … MAX, or a digit string (fraction allowed) in that range. */
function validTimestamp(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'number') return value >= 0 && value <= MAX_TIMESTAMP;
  if (typeof value !== 'string' || !/^\s*\d+(\.\d+)?\s*$/.test(value)) return false;
  return Number(value) <= MAX_TIMESTAMP;
}

/** Absent or null, or a name that is non-empty after trimming, ≤ 200, without control characters. */
function validCollection(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value !== 'string') return false;
  const name = value.trim();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  return name.length >= 1 && name.length <= 200 && !/[\u0000-\u001f]/.test(name);
}

function keyed(body: unknown, apiKey: string): body is Record<string, unknown> {
  return isObject(body) && has(body, 'api_key') === apiKey;
}

/** `POST /api/log`: how many events it stores (1), or null when it must be refused. */
export function logAccepts(body: unknown, apiKey: string): number | null {
  if (!keyed(body, apiKey)) return null;
  const ok =
    validCollection(has(body, 'collection')) &&
    validTimestamp(has(body, 'timestamp')) &&
    validPayload(has(body, 'json'));
  return ok ? 1 : null;
}

/** `POST /api/bulk-log`: how many events it stores, or null when it must be refused. */
export function bulkLogAccepts(body: unknown, apiKey: string): number | null {
  if (!keyed(body, apiKey)) return null;
  const jsons = has(body, 'jsons');
  const ok =
    validCollection(has(body, 'collection')) &&
    validTimestamp(has(body, 'timestamp')) &&
    Array.isArray(jsons) &&
    jsons.length <= MAX_BULK_EVENTS &&
    jsons.every(validPayload);
  return ok ? (jsons as unknown[]).length : null;
}

/** `POST /api/collections`: accepted exactly when the key is right. */
export function collectionsAccepts(body: unknown, apiKey: string): boolean {
  return keyed(body, apiKey);
}
