import { KIND, MAX_DEPTH, stringKind } from './discover-keys.ts';
import { MAX_NESTING, toTimestamp } from './payload-checks.ts';

// Imported bindings copied into module constants: under the TypeScript loader each import is a
// getter call, and the scan reads these for every value of every line.
const { ARRAY, BOOLEAN, NUMBER, OBJECT } = KIND;
const DEEPEST_PATH = MAX_DEPTH;
const DEEPEST_NESTING = MAX_NESTING;

/**
 * The loader's fast path: a line `{"timestamp": <number>, "json": {…}}` whose payload is already
 * in compact form, exactly the text `JSON.stringify(JSON.parse(payload))` would write, is
 * checked in one pass over its UTF-8 bytes and staged as it stands: no decoding to a string, no
 * `JSON.parse`, no `JSON.stringify`, no object per value and no encoding back (decoding and
 * encoding alone were a third of the parse workers' time).
 *
 * The scan accepts a line only when that is provably the outcome of the slow path (see
 * `parse-ndjson.ts`, which decodes the line and parses it): well-formed UTF-8 (the decoder would
 * replace anything else), valid JSON, a timestamp in range, a payload object no deeper than
 * {@link MAX_NESTING} in which every number and string is written as `JSON.stringify` writes
 * it, no white space, no key twice in one object, and no key that JavaScript would move to the
 * front of its object (keys starting with a digit). Anything else, and anything unusual (other
 * keys in the line, a timestamp or payload given as a string, an escape in a key, a string
 * value starting with an escape), answers `false`, and the caller parses the line the slow way,
 * which also words the refusals. The payload's keys are recorded in document order, which is
 * the order `KeyDiscovery` walks a parsed object in when no key starts with a digit.
 */
export class CompactLineScanner {
  /** The line's timestamp, in whole seconds. */
  timestamp = 0;
  /** Where the timestamp's digits are, when the line wrote it as a plain integer (else -1). */
  timestampStart = -1;
  timestampEnd = -1;
  /** Where the payload's bytes start in the scanned buffer. */
  payloadStart = 0;
  /** Where the payload's bytes end (exclusive). */
  payloadEnd = 0;
  /** Keys recorded: the ith has parent key `parents[i]` (-1 at the top), name and kind bits. */
  count = 0;
  readonly parents: number[] = [];
  readonly names: string[] = [];
  readonly kinds: number[] = [];

  #bytes: Uint8Array = EMPTY;
  #end = 0;
  #i = 0;
  /** Whether the last key scanned held a byte outside ASCII. */
  #wide = false;
  /** The keys of each open object, by depth, to find a key written twice. */
  readonly #seen: string[][] = [];
  /** The last name seen at each position, reused while lines hold the same keys. */
  readonly #lastNames: string[] = [];
  #position = 0;

  /** Scans the line `bytes[start, end)`; true when it took the fast path. */
  scan(bytes: Uint8Array, start: number, end: number): boolean {
    this.#bytes = bytes;
    this.#end = end;
    this.count = 0;
    this.#position = 0;
    let i = skipSpace(bytes, start, end);
    if (bytes[i] !== OPEN_OBJECT) return false;
    i = skipSpace(bytes, i + 1, end);
    let timestamp: number | null = null;
    let payload = false;
    for (;;) {
      if (bytes[i] !== QUOTE) return false;
      if (sameAt(bytes, i + 1, TIMESTAMP_KEY) && timestamp === null) {
        i = this.#colon(i + 1 + TIMESTAMP_KEY.length);
        const j = numberEnd(bytes, i, end);
        if (j < 0) return false;
        const integer = plainInteger(bytes, i, j);
        timestamp = toTimestamp(integer >= 0 ? integer : Number(latin1(bytes, i, j)));
        if (timestamp === null) return false;
        this.timestampStart = integer >= 0 ? i : -1;
        this.timestampEnd = integer >= 0 ? j : -1;
        i = j;
      } else if (sameAt(bytes, i + 1, JSON_KEY) && !payload) {
        i = this.#colon(i + 1 + JSON_KEY.length);
        if (bytes[i] !== OPEN_OBJECT) return false;
        this.payloadStart = i;
        this.#i = i;
        if (!this.#object(-1, 1, 1)) return false;
        i = this.#i;
        this.payloadEnd = i;
        payload = true;
      } else return false;
      i = skipSpace(bytes, i, end);
      const c = bytes[i];
      if (c === COMMA) i = skipSpace(bytes, i + 1, end);
      else if (c === CLOSE_OBJECT) break;
      else return false;
    }
    if (timestamp === null || !payload || skipSpace(bytes, i + 1, end) !== end) return false;
    this.timestamp = timestamp;
    return true;
  }

  /**
   * Scans a payload on its own, `bytes[start, end)`: true when it is an object in compact form
   * with nothing around it, under the same rules as a line's payload.
   */
  scanPayload(bytes: Uint8Array, start: number, end: number): boolean {
    this.#bytes = bytes;
    this.#end = end;
    this.count = 0;
    this.#position = 0;
    if (bytes[start] !== OPEN_OBJECT) return false;
    this.payloadStart = start;
    this.#i = start;
    if (!this.#object(-1, 1, 1) || this.#i !== end) return false;
    this.payloadEnd = end;
    return true;
  }

  /**
   * The key name `bytes[start, end)`. Lines mostly hold the same keys in the same order, so the
   * string of the last line's key at this position is reused when it matches: no new string,
   * and its hash is already known to the maps key discovery looks it up in.
   */
  #name(start: number, end: number): string {
    const position = this.#position++;
    const bytes = this.#bytes;
    if (this.#wide) return utf8(bytes, start, end);
    const last = this.#lastNames[position];
    if (last !== undefined && last.length === end - start) {
      let same = true;
      for (let k = 0; k < last.length && same; k++) same = bytes[start + k] === last.charCodeAt(k);
      if (same) return last;
    }
    const name = latin1(bytes, start, end);
    this.#lastNames[position] = name;
    return name;
  }

  /** Past the white space, the colon and the white space after a key of the line; -1 if none. */
  #colon(i: number): number {
    const at = skipSpace(this.#bytes, i, this.#end);
    return this.#bytes[at] === COLON ? skipSpace(this.#bytes, at + 1, this.#end) : -1;
  }

  /**
   * The object at `#i`, whose keys sit at `pathLength` in the payload and are recorded when
   * `owner` is a recorded key or -1 for the payload itself (`owner` is -2 when not recorded).
   */
  #object(owner: number, pathLength: number, depth: number): boolean {
    if (depth > DEEPEST_NESTING) return false;
    const bytes = this.#bytes;
    let i = this.#i + 1;
    if (bytes[i] === CLOSE_OBJECT) {
      this.#i = i + 1;
      return true;
    }
    let seen = this.#seen[depth];
    if (seen) seen.length = 0;
    else this.#seen[depth] = seen = [];
    for (;;) {
      if (bytes[i] !== QUOTE) return false;
      if (isDigit(bytes[i + 1] as number)) return false;
      const j = this.#stringEnd(i, false);
      if (j < 0 || bytes[j] !== COLON) return false;
      const name = this.#name(i + 1, j - 1);
      // Looking for a key twice is quadratic: wide objects go the slow way.
      if (seen.length === WIDEST || seen.includes(name)) return false;
      seen.push(name);
      this.#i = j + 1;
      let recorded = -2;
      if (owner !== -2) {
        recorded = this.count++;
        this.parents[recorded] = owner;
        this.names[recorded] = name;
        this.kinds[recorded] = 0;
      }
      const kind = this.#value(recorded, pathLength, depth);
      if (kind < 0) return false;
      if (recorded !== -2) this.kinds[recorded] = kind;
      i = this.#i;
      const c = bytes[i];
      if (c === COMMA) i++;
      else if (c === CLOSE_OBJECT) {
        this.#i = i + 1;
        return true;
      } else return false;
    }
  }

  /**
   * The value at `#i` (of key `recorded`, at `pathLength`, when one is recorded): its kind bits,
   * or -1 when it is not in compact form. Leaves `#i` past it.
   */
  #value(recorded: number, pathLength: number, depth: number): number {
    const bytes = this.#bytes;
    const i = this.#i;
    const c = bytes[i] as number;
    if (c === QUOTE) {
      const first = bytes[i + 1] as number;
      // A string starting with an escape is rare: the slow path finds its kind.
      if (first === BACKSLASH) return -1;
      this.#i = this.#stringEnd(i, true);
      if (this.#i < 0) return -1;
      // Past ASCII the first character is decoded for the test (`\s` holds Unicode spaces).
      return first < 0x80
        ? stringKind(ASCII[first] as string, 0)
        : stringKind(utf8(bytes, i + 1, this.#i - 1), 0);
    }
    if (c === OPEN_OBJECT) {
      const walked = recorded !== -2 && pathLength < DEEPEST_PATH;
      return this.#object(walked ? recorded : -2, pathLength + 1, depth + 1) ? OBJECT : -1;
    }
    if (c === OPEN_ARRAY) return this.#array(depth + 1) ? ARRAY : -1;
    if (c === MINUS || isDigit(c)) {
      const j = numberEnd(bytes, i, this.#end);
      if (j < 0 || !isCompactNumber(bytes, i, j)) return -1;
      this.#i = j;
      return NUMBER;
    }
    if (sameAt(bytes, i, TRUE)) {
      this.#i = i + 4;
      return BOOLEAN;
    }
    if (sameAt(bytes, i, FALSE)) {
      this.#i = i + 5;
      return BOOLEAN;
    }
    if (sameAt(bytes, i, NULL)) {
      this.#i = i + 4;
      return 0;
    }
    return -1;
  }

  /** The array at `#i`: its values are checked, their keys not recorded (arrays are not walked). */
  #array(depth: number): boolean {
    if (depth > DEEPEST_NESTING) return false;
    const bytes = this.#bytes;
    this.#i++;
    if (bytes[this.#i] === CLOSE_ARRAY) {
      this.#i++;
      return true;
    }
    for (;;) {
      if (this.#value(-2, DEEPEST_PATH, depth) < 0) return false;
      const c = bytes[this.#i++];
      if (c === CLOSE_ARRAY) return true;
      if (c !== COMMA) return false;
    }
  }

  /**
   * Past the closing quote of the string opening at `i`, or -1 unless it is written as
   * `JSON.stringify` writes it: characters as they are except `"`, `\` and controls, escaped as
   * `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t` or `\u00xx` (lower-case), in well-formed UTF-8
   * (which holds no half surrogate pair). Keys (`escapes` false) take no escape at all, so their
   * bytes are their name; `#wide` tells whether any of them lies outside ASCII.
   */
  #stringEnd(i: number, escapes: boolean): number {
    const bytes = this.#bytes;
    const end = this.#end;
    this.#wide = false;
    for (let j = i + 1; j < end; j++) {
      const c = bytes[j] as number;
      if (c === QUOTE) return j + 1;
      if (c < 0x20) return -1;
      if (c === BACKSLASH) {
        if (!escapes) return -1;
        const e = bytes[++j] as number;
        if (SHORT_ESCAPE[e] === 1) continue;
        if (e !== LETTER_U || !isControlEscape(bytes, j + 1)) return -1;
        j += 4;
      } else if (c >= 0x80) {
        const length = utf8SequenceLength(bytes, j, end);
        if (length === 0) return -1;
        this.#wide = true;
        j += length - 1;
      }
    }
    return -1;
  }
}

const EMPTY = new Uint8Array(0);

/** The UTF-8 bytes of the payload texts {@link scanCompactText} scans, reused. */
let textBytes = Buffer.allocUnsafe(64 * 1024);

/**
 * The fast path for a payload sent as text (`/api/bulk-log`'s `jsons`): true when `text` is an
 * object in compact form, which `scanner` then describes (its keys), exactly as `JSON.parse`
 * and key discovery would. Anything else, half surrogate pairs included (which UTF-8 cannot
 * hold, so the bytes would not be the text), answers `false` for the slow path to decide.
 */
export function scanCompactText(text: string, scanner: CompactLineScanner): boolean {
  if (!text.isWellFormed()) return false;
  if (text.length * 3 > textBytes.length) textBytes = Buffer.allocUnsafe(text.length * 3);
  const length = textBytes.write(text, 0, 'utf8');
  return scanner.scanPayload(textBytes, 0, length);
}

/** Keys in one object beyond which the scan leaves the line to the slow path. */
const WIDEST = 64;

const QUOTE = 0x22;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const BACKSLASH = 0x5c;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const LETTER_U = 0x75;

const codes = (word: string) => Uint8Array.from(word, (c) => c.charCodeAt(0));
const TIMESTAMP_KEY = codes('timestamp"');
const JSON_KEY = codes('json"');
const TRUE = codes('true');
const FALSE = codes('false');
const NULL = codes('null');

/** One-character strings for ASCII, so a string's kind is told without slicing it. */
const ASCII = Array.from({ length: 128 }, (_, c) => String.fromCharCode(c));

/** Escapes `JSON.stringify` writes as two characters: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`. */
const SHORT_ESCAPE = new Uint8Array(128);
for (const c of '"\\bfnrt') SHORT_ESCAPE[c.charCodeAt(0)] = 1;

/** Lower-case hex digits' values, -1 for anything else. */
const HEX = new Int8Array(256).fill(-1);
for (let c = 0; c < 16; c++) HEX['0123456789abcdef'.charCodeAt(c)] = c;

/** Whether `bytes` at `at` hold `00xx` (lower-case hex) for a control that has no short escape. */
function isControlEscape(bytes: Uint8Array, at: number): boolean {
  if (bytes[at] !== DIGIT_0 || bytes[at + 1] !== DIGIT_0) return false;
  const high = HEX[bytes[at + 2] as number] as number;
  const low = HEX[bytes[at + 3] as number] as number;
  if (high < 0 || high > 1 || low < 0) return false;
  const code = high * 16 + low;
  return code !== 0x08 && code !== 0x09 && code !== 0x0a && code !== 0x0c && code !== 0x0d;
}

/**
 * The length of the well-formed UTF-8 sequence of a character past ASCII at `j` (2 to 4), or 0
 * for anything a decoder would replace: stray continuation bytes, overlong forms, encoded
 * surrogates, code points past U+10FFFF, a sequence cut short.
 */
function utf8SequenceLength(bytes: Uint8Array, j: number, end: number): number {
  const c = bytes[j] as number;
  let length: number;
  let low = 0x80;
  let high = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) length = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    length = 3;
    if (c === 0xe0) low = 0xa0;
    else if (c === 0xed) high = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    length = 4;
    if (c === 0xf0) low = 0x90;
    else if (c === 0xf4) high = 0x8f;
  } else return 0;
  if (j + length > end) return 0;
  const second = bytes[j + 1] as number;
  if (second < low || second > high) return 0;
  for (let k = 2; k < length; k++) {
    const next = bytes[j + k] as number;
    if (next < 0x80 || next > 0xbf) return 0;
  }
  return length;
}

/** Whether `bytes` hold `word` at `at`. */
function sameAt(bytes: Uint8Array, at: number, word: Uint8Array): boolean {
  for (let k = 0; k < word.length; k++) {
    if (bytes[at + k] !== word[k]) return false;
  }
  return true;
}

/** Past JSON's white space (space, tab, line feed, carriage return) from `i`, up to `end`. */
function skipSpace(bytes: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const c = bytes[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return i;
    i++;
  }
  return i;
}

function isDigit(c: number): boolean {
  return c >= DIGIT_0 && c <= DIGIT_9;
}

/** Past the JSON number at `i` (`-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`), or -1 if none. */
function numberEnd(bytes: Uint8Array, i: number, end: number): number {
  if (bytes[i] === MINUS) i++;
  const first = bytes[i] as number;
  if (first === DIGIT_0) i++;
  else if (isDigit(first)) while (i < end && isDigit(bytes[i] as number)) i++;
  else return -1;
  if (bytes[i] === DOT) {
    if (!isDigit(bytes[++i] as number)) return -1;
    while (i < end && isDigit(bytes[i] as number)) i++;
  }
  const e = bytes[i];
  if (e === 0x65 || e === 0x45) {
    const sign = bytes[++i];
    if (sign === 0x2b || sign === MINUS) i++;
    if (!isDigit(bytes[i] as number)) return -1;
    while (i < end && isDigit(bytes[i] as number)) i++;
  }
  return i > end ? -1 : i;
}

/**
 * The value of `bytes[start, end)` when it is a number written as plain digits, at most 15 of
 * them (so exact as a double), else -1.
 */
function plainInteger(bytes: Uint8Array, start: number, end: number): number {
  if (end - start > 15) return -1;
  let value = 0;
  for (let i = start; i < end; i++) {
    const c = bytes[i] as number;
    if (!isDigit(c)) return -1;
    value = value * 10 + (c - DIGIT_0);
  }
  return value;
}

/**
 * Whether the number `bytes[start, end)` is written as `JSON.stringify` writes its value. An
 * integer of at most 15 digits (not `-0`) always is; anything else is compared with it.
 */
function isCompactNumber(bytes: Uint8Array, start: number, end: number): boolean {
  const negative = bytes[start] === MINUS;
  const integer = plainInteger(bytes, negative ? start + 1 : start, end);
  if (integer > 0 || (integer === 0 && !negative)) return true;
  const written = latin1(bytes, start, end);
  return String(Number(written)) === written;
}

/** The text of `bytes[start, end)`, one character per byte (for ASCII). */
function latin1(bytes: Uint8Array, start: number, end: number): string {
  return String.fromCharCode.apply(null, bytes.subarray(start, end) as unknown as number[]);
}

// ignoreBOM keeps a leading U+FEFF (of a key, a value, a line), which a decoder drops by default.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** The text of the UTF-8 `bytes[start, end)`; ill-formed bytes become U+FFFD, as anywhere. */
export function utf8(bytes: Uint8Array, start: number, end: number): string {
  return decoder.decode(bytes.subarray(start, end));
}
