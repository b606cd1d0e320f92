/**
 * A payload value's two forms on ClickHouse, defined once as ClickHouse SQL over the JSON text
 * and once in JavaScript for ingest, which must agree value for value:
 *
 * - numeric form: a JSON number, or a string that is a decimal number (sign, exponent and
 *   surrounding spaces allowed), as the nearest double where that is finite; else NULL.
 * - string form: strings as they are, numbers as their JSON text (ClickHouse's, with the `+` of
 *   a positive exponent that JavaScript writes), booleans as `true`/`false`, arrays as compact
 *   JSON (ClickHouse's serialisation); objects, null and missing values have none. A value is
 *   present, for picking a field's spelling, exactly where its string form is not NULL.
 *
 * The JavaScript side computes the forms only where it is sure to give ClickHouse's answer;
 * where it is not (a number beyond 2^53, `-0`, an array holding text that ClickHouse escapes
 * differently, a payload with a duplicate key…) it says so, and the insert leaves that column to
 * ClickHouse's DEFAULT, which is the SQL below.
 */

import { JSON_TOKENS } from '../json-tokens.ts';
import { LONG_INTEGER } from './clickhouse-readable-json.ts';
import { clickHouseStringLiteral } from './clickhouse-sql-text.ts';

/** A decimal number in text, as the numeric form reads strings (RE2 syntax). */
export const NUMERIC_TEXT = '^\\s*[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?\\s*$';

/** The numeric form of the JSON value at `keys` (`json, 'a'` or a column of JSON text). */
export function numericFormSql(keys: string, pattern: string): string {
  // A decimal text beyond ±1.8e308 (`"1e400"`) reads as infinity: it has no numeric form.
  // A value that is not a string has no text (`JSONExtractString` reads ''), which no number is.
  return `nullIf(nullIf(multiIf(JSONType(${keys}) IN ('Int64', 'UInt64', 'Double'), JSONExtractFloat(${keys}),
      match(${textSql(keys)}, ${pattern}),
        toFloat64OrNull(replaceRegexpOne(trimBoth(${textSql(keys)}), '^\\\\+', '')),
      NULL), inf), -inf)`;
}

/**
 * The string form of the JSON value at `keys` (also used for array elements, keys = `e`). A
 * number's or boolean's is its JSON text (a boolean's holds no exponent). Kept short: a key
 * column's DEFAULT is analysed again by every ALTER and insert of its table.
 */
export function stringFormSql(keys: string): string {
  return `multiIf(JSONType(${keys}) = 'String', ${textSql(keys)},
    JSONType(${keys}) IN ('Int64', 'UInt64', 'Double', 'Bool'),
      replaceRegexpOne(JSONExtractRaw(${keys}), 'e([0-9])', 'e+\\\\1'),
    JSONType(${keys}) = 'Array', ${arrayTextSql(`JSONExtractRaw(${keys})`)},
    NULL)`;
}

/**
 * A JSON string's text, or the digits of an integer token the readable payload marked (a string
 * of U+0000 and the digits, `clickhouse-readable-json.ts`).
 */
function textSql(keys: string): string {
  // Written once: each copy of a reading's JSON call costs the query's planning time.
  return `replaceRegexpOne(JSONExtractString(${keys}), '^\\\\x00(${LONG_INTEGER})$', '\\\\1')`;
}

/**
 * An array's compact JSON as the number rule writes it: marked integer tokens back to their
 * digits, and a `+` in each positive exponent outside strings (ClickHouse writes `1e21`). Its
 * tokens joined are the whole text, so text without an exponent comes back as it is.
 */
function arrayTextSql(raw: string): string {
  const unmarked = `replaceRegexpAll(${raw}, '"\\\\\\\\u0000(${LONG_INTEGER})"', '\\\\1')`;
  return `arrayStringConcat(arrayMap(t -> if(startsWith(t, '"'), t, replaceRegexpAll(t, 'e([0-9])', 'e+\\\\1')), extractAll(${unmarked}, ${clickHouseStringLiteral(JSON_TOKENS)})))`;
}

/** One value's forms, or `undefined` where JavaScript cannot be sure of ClickHouse's. */
export type Forms = { number: number | null; string: string | null } | undefined;

const NONE = { number: null, string: null };

/** {@link NUMERIC_TEXT} with RE2's `\s` (tab, newline, form feed, return, space). */
const NUMERIC_JS = /^[\t\n\f\r ]*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[\t\n\f\r ]*$/;
/** Numbers JavaScript and ClickHouse both write the same way (see {@link plainNumber}). */
const EXACT = 2 ** 53;
/** Text ClickHouse writes inside JSON exactly as JavaScript does. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is escaped
const PLAIN_TEXT = /^[^"\\/\u0000-\u001f\u007f-\u009f\u2028\u2029]*$/;
/** Keys JavaScript orders before the others, unlike the text. */
const INDEX_KEY = /^\d+$/;

/**
 * Whether a number reads the same in both: JavaScript's shortest text is ClickHouse's for
 * integers below 2^53 and for fractions, but a larger integer may have been an integer token
 * that ClickHouse keeps exactly or cannot read, and `-0` may have been `-0` or `-0.0`.
 */
function plainNumber(n: number, canonical: boolean): boolean {
  if (!Number.isFinite(n)) return false;
  // In text JSON.stringify wrote, every number is its shortest text, which is the rule's string
  // form even where ClickHouse cannot read the document (an integer token of 2^64 or more).
  if (canonical) return true;
  return !Object.is(n, -0) && !(Number.isInteger(n) && Math.abs(n) >= EXACT);
}

/** ClickHouse's compact JSON of a value inside an array, or `undefined` if not sure. */
function arrayText(value: unknown, canonical: boolean): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return PLAIN_TEXT.test(value) ? `"${value}"` : undefined;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return plainNumber(value, canonical) ? String(value) : undefined;
    case 'object': {
      const parts: string[] = [];
      if (Array.isArray(value)) {
        for (const item of value) {
          const text = arrayText(item, canonical);
          if (text === undefined) return undefined;
          parts.push(text);
        }
        return `[${parts.join(',')}]`;
      }
      for (const [key, item] of Object.entries(value)) {
        const text = arrayText(item, canonical);
        if (text === undefined || !PLAIN_TEXT.test(key) || INDEX_KEY.test(key)) return undefined;
        parts.push(`"${key}":${text}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      return undefined;
  }
}

/**
 * The forms of a value JSON.parse gave (`undefined` in: the key is missing); `canonical` when
 * the payload's text is what JSON.stringify writes for it (see {@link parsePayload}).
 */
export function formsOf(value: unknown, canonical = false): Forms {
  if (value === undefined || value === null) return NONE;
  switch (typeof value) {
    case 'string': {
      if (!NUMERIC_JS.test(value)) return { number: null, string: value };
      // ClickHouse trims only spaces before parsing: other white space is left to it.
      if (/[\t\n\f\r]/.test(value)) return undefined;
      const n = Number(value);
      return { number: Number.isFinite(n) ? n : null, string: value };
    }
    case 'number':
      return plainNumber(value, canonical) ? { number: value, string: String(value) } : undefined;
    case 'boolean':
      return { number: null, string: value ? 'true' : 'false' };
    case 'object': {
      if (!Array.isArray(value)) return NONE;
      const text = arrayText(value, canonical);
      return text === undefined ? undefined : { number: null, string: text };
    }
    default:
      return undefined;
  }
}

/** The value at `path` of a parsed payload (object members only, as ClickHouse's string keys). */
export function valueAt(payload: unknown, path: readonly string[]): unknown {
  let value = payload;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    if (!Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** How many object keys JSON text holds (every string followed by a colon). */
function keysInText(text: string): number {
  let keys = 0;
  for (let i = text.indexOf('"'); i !== -1; i = text.indexOf('"', i + 1)) {
    // To the closing quote, past escapes.
    let end = i + 1;
    for (;;) {
      const c = text.charCodeAt(end);
      if (c === 0x5c) end += 2;
      else if (c === 0x22 || Number.isNaN(c)) break;
      else end++;
    }
    let next = end + 1;
    while (next < text.length && text.charCodeAt(next) <= 0x20) next++;
    if (text.charCodeAt(next) === 0x3a) keys++;
    i = end;
  }
  return keys;
}

/** How many object keys a parsed value holds, at every depth (payloads are nested ≤ 256). */
function keysInValue(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let keys = 0;
  if (Array.isArray(value)) for (const item of value) keys += keysInValue(item);
  else {
    for (const item of Object.values(value)) keys += 1 + keysInValue(item);
  }
  return keys;
}

/**
 * The payload parsed as ClickHouse reads it, or `undefined` where it may not: JSON.parse keeps
 * the last of two equal keys and ClickHouse the first. Text JSON.stringify writes has none
 * (`canonical`); other text is checked by counting its keys.
 */
export function parsePayload(text: string): { value: unknown; canonical: boolean } | undefined {
  const value: unknown = JSON.parse(text);
  if (JSON.stringify(value) === text) return { value, canonical: true };
  return keysInText(text) === keysInValue(value) ? { value, canonical: false } : undefined;
}
