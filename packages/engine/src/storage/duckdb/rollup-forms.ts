import type { EventRecord } from '../ingest-batch.ts';
import type { RollupLedger } from './rollups.ts';

/**
 * The rows `returningSql` (`rollups.ts`) reads from inserted events, computed in JavaScript
 * while the insert runs: per record, its timestamp, each rolled-up key's string form and each
 * summed metric's numeric form. A payload whose text is what `JSON.stringify` writes holds every
 * number as its shortest text, which is also what DuckDB's JSON reader writes back (with the `+`
 * of a positive exponent that the stored form adds), so a top-level value's string form is its
 * string, `String(number)` or `true`/`false`, and a number's numeric form is the number itself.
 *
 * Each row is handed to `visit` in one array that is reused for the next. Answers false (after
 * visiting the rows before it) at the first record JavaScript is not sure of (a payload in
 * another spelling, an array, a string that may read as a number): DuckDB's own SQL then
 * computes the forms (`key-typing.ts`). A record in compact form (`canonical`) is read without
 * being parsed ({@link topLevelTexts}); others are parsed.
 */
export function forEachRollupRow(
  ledger: RollupLedger,
  records: readonly EventRecord[],
  visit: (row: readonly unknown[]) => void,
): boolean {
  // Each name once (a key may also be summed), as JSON text; where each key and sum reads.
  const quoted: string[] = [];
  const at = (name: string) => {
    const text = JSON.stringify(name);
    const i = quoted.indexOf(text);
    return i >= 0 ? i : quoted.push(text) - 1;
  };
  const places = {
    keys: ledger.keys.map((k) => (k.written ? at(k.name) : -1)),
    sums: ledger.sums.map(at),
  };
  const tokens: Array<string | undefined> = [];
  const row: unknown[] = new Array(1 + places.keys.length + places.sums.length);
  for (const record of records) {
    const sure = record.canonical
      ? compactRow(places, quoted, tokens, record, row)
      : parsedRow(ledger, record, row);
    if (!sure) return false;
    visit(row);
  }
  return true;
}

/**
 * {@link forEachRollupRow}'s row of a record in compact form, into `row`, read from its top-level
 * values' texts without parsing the payload: `quoted` names them as JSON text, `places` says
 * which of them each key (-1 where not written) and each sum reads. False where unsure.
 */
function compactRow(
  places: { keys: readonly number[]; sums: readonly number[] },
  quoted: readonly string[],
  tokens: Array<string | undefined>,
  record: EventRecord,
  row: unknown[],
): boolean {
  if (!topLevelTexts(record.payload, quoted, tokens)) return false;
  row[0] = record.timestamp;
  let i = 1;
  for (const place of places.keys) {
    const form = place < 0 ? null : compactStringForm(tokens[place]);
    if (form === undefined) return false;
    row[i++] = form;
  }
  for (const place of places.sums) {
    const form = compactNumericForm(tokens[place]);
    if (form === undefined) return false;
    row[i++] = form;
  }
  return true;
}

/** {@link forEachRollupRow}'s row of a record read by parsing its payload, into `row`. */
function parsedRow(ledger: RollupLedger, record: EventRecord, row: unknown[]): boolean {
  const json = canonicalObject(record);
  if (json === undefined) return false;
  row[0] = record.timestamp;
  let i = 1;
  for (const key of ledger.keys) {
    const form = key.written
      ? stringForm(Object.hasOwn(json, key.name) ? json[key.name] : undefined)
      : null;
    if (form === undefined) return false;
    row[i++] = form;
  }
  for (const name of ledger.sums) {
    const form = numericForm(Object.hasOwn(json, name) ? json[name] : undefined);
    if (form === undefined) return false;
    row[i++] = form;
  }
  return true;
}

/**
 * The JSON texts of the top-level values named by `quoted` (names as JSON text) in `text`, an
 * object exactly as `JSON.stringify` writes it (no white space, no key twice), into `out`
 * (`undefined` where missing); false where the text is not such an object.
 */
export function topLevelTexts(
  text: string,
  quoted: readonly string[],
  out: Array<string | undefined>,
): boolean {
  out.length = quoted.length;
  out.fill(undefined);
  if (text.charCodeAt(0) !== OPEN_OBJECT) return false;
  let i = 1;
  if (text.charCodeAt(1) === CLOSE_OBJECT) return text.length === 2;
  let found = 0;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return false;
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0 || text.charCodeAt(keyEnd + 1) !== COLON) return false;
    let match = -1;
    for (let q = 0; q < quoted.length; q++) {
      const name = quoted[q] as string;
      // Lengths first, which rule out most keys for less than a comparison of text.
      if (name.length === keyEnd + 1 - i && text.startsWith(name, i)) {
        match = q;
        break;
      }
    }
    const start = keyEnd + 2;
    const end = valueEnd(text, start);
    if (end < 0) return false;
    if (match >= 0) {
      out[match] = text.slice(start, end);
      // No key twice: once every name is found, the rest of the text holds none of them.
      if (++found === quoted.length) return true;
    }
    const c = text.charCodeAt(end);
    if (c === CLOSE_OBJECT) return end === text.length - 1;
    if (c !== COMMA) return false;
    i = end + 1;
  }
}

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;

/** The index of the quote closing the string that opens at `start`, or -1. */
function stringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(q - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return q;
    from = q + 1;
  }
}

/** The index just past the JSON value that starts at `start`, or -1. */
function valueEnd(text: string, start: number): number {
  const first = text.charCodeAt(start);
  if (first === QUOTE) {
    const q = stringEnd(text, start);
    return q < 0 ? -1 : q + 1;
  }
  if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
    let depth = 0;
    for (let j = start; j < text.length; j++) {
      const c = text.charCodeAt(j);
      if (c === QUOTE) {
        j = stringEnd(text, j);
        if (j < 0) return -1;
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++;
      else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        if (--depth === 0) return j + 1;
      }
    }
    return -1;
  }
  let j = start;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (c === COMMA || c === CLOSE_OBJECT) break;
    j++;
  }
  return j > start ? j : -1;
}

/** {@link stringForm} of a top-level value given as its JSON text in compact form. */
function compactStringForm(token: string | undefined): string | null | undefined {
  if (token === undefined) return null;
  switch (token.charCodeAt(0)) {
    case QUOTE:
      return decodeString(token);
    case OPEN_OBJECT:
      return null;
    case OPEN_ARRAY:
      return undefined;
    default:
      // A number as JSON.stringify writes it is its string form; true, false and null.
      return token === 'null' ? null : token;
  }
}

/** {@link numericForm} of a top-level value given as its JSON text in compact form. */
function compactNumericForm(token: string | undefined): number | null | undefined {
  if (token === undefined) return null;
  const c = token.charCodeAt(0);
  if (c === QUOTE) return MAYBE_NUMERIC.test(decodeString(token)) ? undefined : null;
  // Digits or a minus sign: the shortest digits of a double, which read back as it.
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return Number(token);
  return null;
}

/** The string a JSON string literal holds. */
function decodeString(token: string): string {
  return token.includes('\\') ? (JSON.parse(token) as string) : token.slice(1, -1);
}

/** The record's payload as an object, where its text is exactly what JSON.stringify writes. */
function canonicalObject(record: EventRecord): Record<string, unknown> | undefined {
  const value = JSON.parse(record.payload) as unknown;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  if (!record.canonical && JSON.stringify(value) !== record.payload) return undefined;
  return value as Record<string, unknown>;
}

/** A top-level value's string form, null where it has none, `undefined` where unsure. */
function stringForm(value: unknown): string | null | undefined {
  switch (typeof value) {
    case 'undefined':
      return null;
    case 'string':
      // Payload checks refused half surrogate pairs, the one text DuckDB reads otherwise.
      return value;
    case 'number':
      return Number.isFinite(value) ? String(value) : undefined;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      // An object has no string form; an array's is its JSON text as DuckDB writes it.
      return value === null || !Array.isArray(value) ? null : undefined;
    default:
      return undefined;
  }
}

/**
 * Text the numeric form might read as a number (`NUMERIC_TEXT` of `key-typing.ts`, with any
 * white space around): such strings are left to DuckDB's cast.
 */
const MAYBE_NUMERIC = /^\s*[+-]?(\d|\.\d)/;

/** A top-level value's numeric form, null where it has none, `undefined` where unsure. */
function numericForm(value: unknown): number | null | undefined {
  switch (typeof value) {
    case 'number':
      // The text holds the shortest digits of `value`, which read back as `value`.
      return Number.isFinite(value) ? value + 0 : undefined;
    case 'string':
      return MAYBE_NUMERIC.test(value) ? undefined : null;
    case 'boolean':
    case 'undefined':
      return null;
    case 'object':
      // Objects and arrays have no numeric form: an array's string form starts with `[`.
      return null;
    default:
      return undefined;
  }
}
