import { MAX_DEPTH, MAX_EVENT_KEYS } from '../storage/seen-key.ts';
import { MAX_TIMESTAMP } from './event-records.ts';
import { canonicalNumberTexts } from './number-texts.ts';
import { describeField, type JsonPath } from './strict-utf8.ts';

/**
 * The checks every ingested event passes, shared by the HTTP endpoints and the NDJSON loader
 * (whose parse workers import this module, so it stays free of zod and DuckDB).
 */

/** Why a timestamp is refused. */
export const BAD_TIMESTAMP = `expected Unix seconds (a number from 0 to ${MAX_TIMESTAMP})`;

/**
 * How deeply a payload may nest objects and arrays (the payload itself is level 1). Deeper
 * payloads are refused, whether sent as an object or as text, so that nothing downstream (the
 * compact form, the surrogate check, DuckDB's JSON functions) ever recurses without bound and
 * storage holds one kind of payload whatever way it arrived.
 */
export const MAX_NESTING = 256;

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

/** A validated payload: its text as it will be stored, and the object it holds. */
export interface Payload {
  payload: string;
  json: Record<string, unknown>;
}

const NOT_AN_OBJECT = 'expected a JSON object, or a string holding one';
const TOO_DEEP = `nested deeper than ${MAX_NESTING} levels`;

/** Why an event wider than {@link MAX_EVENT_KEYS} is refused. */
export const TOO_WIDE = `holds more than ${MAX_EVENT_KEYS} keys (key paths up to ${MAX_DEPTH} levels deep, objects included); split it into several events`;

/**
 * Checks one payload: an object (stored in compact form) or a string holding a JSON object
 * (stored as sent, its numbers written as `JSON.stringify` writes them). Returns the payload, or why it is refused. A plain function rather
 * than a zod schema: bulk requests and the loader run it for every event.
 */
export function toPayload(value: unknown): Payload | string {
  let payload: Payload;
  if (typeof value === 'string') {
    // Counted in the text before parsing: an event far too wide then costs no objects at all.
    if (
      value.length > MIN_KEY_TEXT * MAX_EVENT_KEYS &&
      textHoldsMoreKeysThan(value, MAX_EVENT_KEYS)
    ) {
      return TOO_WIDE;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      return 'is not valid JSON';
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return NOT_AN_OBJECT;
    }
    payload = { payload: canonicalNumberTexts(value), json: parsed as Record<string, unknown> };
  } else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    let text: string;
    try {
      text = JSON.stringify(value);
    } catch (error) {
      // JSON.stringify recurses: an object nested thousands deep overflows the stack.
      if (error instanceof RangeError) return TOO_DEEP;
      throw error;
    }
    payload = { payload: text, json: value as Record<string, unknown> };
  } else return NOT_AN_OBJECT;
  if (nestedDeeperThan(payload.payload, MAX_NESTING)) return TOO_DEEP;
  if (holdsMoreKeysThan(payload.json, MAX_EVENT_KEYS)) return TOO_WIDE;
  // A number literal beyond the doubles parses as Infinity, which JSON.stringify writes as null.
  const mayHoldInfinity =
    typeof value === 'string' ? BIG_LITERAL.test(value) : payload.payload.includes('null');
  if (mayHoldInfinity) {
    const at = nonFinitePath(payload.json, []);
    if (at) return describeField(at, false, BEYOND_DOUBLE);
  }
  // JavaScript accepts half a surrogate pair ("\ud800"); it is not Unicode, and DuckDB refuses it.
  if (SURROGATE.test(payload.payload) && hasLoneSurrogate(payload.json)) {
    return 'contains half a UTF-16 surrogate pair, which is not valid Unicode';
  }
  return payload;
}

/**
 * Whether JSON text nests objects and arrays more than `limit` levels deep. Its length or a
 * count of its brackets (fast, native `indexOf`) settles almost every payload; only text with
 * more brackets than the limit is scanned, skipping brackets inside strings.
 */
export function nestedDeeperThan(text: string, limit: number): boolean {
  // Each level takes an opening and a closing bracket.
  if (text.length < 2 * (limit + 1)) return false;
  let brackets = 0;
  for (let i = text.indexOf('{'); i !== -1 && brackets <= limit; i = text.indexOf('{', i + 1)) {
    brackets++;
  }
  for (let i = text.indexOf('['); i !== -1 && brackets <= limit; i = text.indexOf('[', i + 1)) {
    brackets++;
  }
  if (brackets <= limit) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

const SURROGATE = /\\u[dD][89a-fA-F]|[\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Recursive, which is safe: payloads reach it only after the nesting check. */
function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  for (const [key, item] of Object.entries(value)) {
    if (LONE_SURROGATE.test(key) || hasLoneSurrogate(item)) return true;
  }
  return false;
}

const BEYOND_DOUBLE = 'is a number beyond the range of a double (±1.8e308)';

/** A number literal that may lie beyond the doubles: an exponent of 3 digits, or 309 digits. */
const BIG_LITERAL = /\d[eE]\+?\d{3}|\d{309}/;

/** The path of the first number that is not finite. Recursive, after the nesting check. */
function nonFinitePath(value: unknown, path: JsonPath): JsonPath | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : path;
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nonFinitePath(value[i], [...path, i]);
      if (found) return found;
    }
    return undefined;
  }
  for (const key in value) {
    const found = nonFinitePath((value as Record<string, unknown>)[key], [...path, key]);
    if (found) return found;
  }
  return undefined;
}

/**
 * Whether a payload holds more than `limit` key paths as key discovery counts them (every key of
 * every object down to {@link MAX_DEPTH} keys), stopping once past it. Recursive, after the
 * nesting check.
 */
export function holdsMoreKeysThan(object: Record<string, unknown>, limit: number): boolean {
  let count = 0;
  const walk = (level: Record<string, unknown>, depth: number): boolean => {
    for (const key in level) {
      if (++count > limit) return true;
      const value = level[key];
      if (
        depth < MAX_DEPTH &&
        typeof value === 'object' &&
        value !== null &&
        !Array.isArray(value)
      ) {
        if (walk(value as Record<string, unknown>, depth + 1)) return true;
      }
    }
    return false;
  };
  return walk(object, 1);
}

/** The fewest characters a key path takes in JSON text (`"":0,`). */
const MIN_KEY_TEXT = 5;

/**
 * {@link holdsMoreKeysThan} read from JSON text, without parsing it: a colon outside strings
 * ends a key, counted while no array encloses it and at most {@link MAX_DEPTH} objects do. On
 * text that is not JSON the count means nothing, which only changes which refusal it gets.
 */
export function textHoldsMoreKeysThan(text: string, limit: number): boolean {
  let count = 0;
  let objects = 0;
  let arrays = 0;
  const open: boolean[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Past the string: a backslash escapes the next character.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x3a) {
      if (arrays === 0 && objects <= MAX_DEPTH && ++count > limit) return true;
    } else if (c === 0x7b) {
      objects++;
      open.push(true);
    } else if (c === 0x5b) {
      arrays++;
      open.push(false);
    } else if (c === 0x7d || c === 0x5d) {
      if (open.pop()) objects--;
      else arrays--;
    }
  }
  return false;
}
