import { KIND, MAX_DEPTH, stringKind } from './discover-keys.ts';
import { MAX_NESTING, toTimestamp } from './payload-checks.ts';

// Imported bindings copied into module constants: under the TypeScript loader each import is a
// getter call, and the scan reads these for every value of every line.
const { ARRAY, BOOLEAN, NUMBER, OBJECT } = KIND;
const DEEPEST_PATH = MAX_DEPTH;
const DEEPEST_NESTING = MAX_NESTING;
const kindOfString = stringKind;

/**
 * The loader's fast path: a line `{"timestamp": <number>, "json": {…}}` whose payload is already
 * in compact form, exactly the text `JSON.stringify(JSON.parse(payload))` would write, is
 * checked in one pass over its characters and staged as it stands, without `JSON.parse`,
 * `JSON.stringify` or an object per value (those were two thirds of the parse workers' time).
 *
 * The scan accepts a line only when that is provably the outcome of the slow path (see
 * `parse-ndjson.ts`): valid JSON, a timestamp in range, a payload object no deeper than
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
  /** Where the payload's text starts in the scanned text. */
  payloadStart = 0;
  /** Where the payload's text ends (exclusive). */
  payloadEnd = 0;
  /** Keys recorded: the ith has parent key `parents[i]` (-1 at the top), name and kind bits. */
  count = 0;
  readonly parents: number[] = [];
  readonly names: string[] = [];
  readonly kinds: number[] = [];

  #text = '';
  #end = 0;
  #i = 0;
  /** The keys of each open object, by depth, to find a key written twice. */
  readonly #seen: string[][] = [];
  /** The last name seen at each position, reused while lines hold the same keys. */
  readonly #lastNames: string[] = [];
  #position = 0;

  /** Scans the line `text[start, end)`; true when it took the fast path. */
  scan(text: string, start: number, end: number): boolean {
    this.#text = text;
    this.#end = end;
    this.count = 0;
    this.#position = 0;
    let i = skipSpace(text, start, end);
    if (text.charCodeAt(i) !== OPEN_OBJECT) return false;
    i = skipSpace(text, i + 1, end);
    let timestamp: number | null = null;
    let payload = false;
    for (;;) {
      if (text.charCodeAt(i) !== QUOTE) return false;
      if (sameAt(text, i + 1, 'timestamp"') && timestamp === null) {
        i = this.#colon(i + 11);
        const j = numberEnd(text, i, end);
        if (j < 0) return false;
        timestamp = toTimestamp(Number(text.slice(i, j)));
        if (timestamp === null) return false;
        i = j;
      } else if (sameAt(text, i + 1, 'json"') && !payload) {
        i = this.#colon(i + 6);
        if (text.charCodeAt(i) !== OPEN_OBJECT) return false;
        this.payloadStart = i;
        this.#i = i;
        if (!this.#object(-1, 1, 1)) return false;
        i = this.#i;
        this.payloadEnd = i;
        payload = true;
      } else return false;
      i = skipSpace(text, i, end);
      const c = text.charCodeAt(i);
      if (c === COMMA) i = skipSpace(text, i + 1, end);
      else if (c === CLOSE_OBJECT) break;
      else return false;
    }
    if (timestamp === null || !payload || skipSpace(text, i + 1, end) !== end) return false;
    this.timestamp = timestamp;
    return true;
  }

  /**
   * The key name `text[start, end)`. Lines mostly hold the same keys in the same order, so the
   * string of the last line's key at this position is reused when it matches: no new string,
   * and its hash is already known to the maps key discovery looks it up in.
   */
  #name(start: number, end: number): string {
    const position = this.#position++;
    const last = this.#lastNames[position];
    if (last !== undefined && last.length === end - start && sameAt(this.#text, start, last)) {
      return last;
    }
    const name = this.#text.slice(start, end);
    this.#lastNames[position] = name;
    return name;
  }

  /** Past the white space, the colon and the white space after a key of the line; -1 if none. */
  #colon(i: number): number {
    const at = skipSpace(this.#text, i, this.#end);
    return this.#text.charCodeAt(at) === COLON ? skipSpace(this.#text, at + 1, this.#end) : -1;
  }

  /**
   * The object at `#i`, whose keys sit at `pathLength` in the payload and are recorded when
   * `owner` is a recorded key or -1 for the payload itself (`owner` is -2 when not recorded).
   */
  #object(owner: number, pathLength: number, depth: number): boolean {
    if (depth > DEEPEST_NESTING) return false;
    const text = this.#text;
    let i = this.#i + 1;
    if (text.charCodeAt(i) === CLOSE_OBJECT) {
      this.#i = i + 1;
      return true;
    }
    let seen = this.#seen[depth];
    if (seen) seen.length = 0;
    else this.#seen[depth] = seen = [];
    for (;;) {
      if (text.charCodeAt(i) !== QUOTE) return false;
      const first = text.charCodeAt(i + 1);
      if (isDigit(first)) return false;
      const j = this.#stringEnd(i, false);
      if (j < 0 || text.charCodeAt(j) !== COLON) return false;
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
      const c = text.charCodeAt(i);
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
    const text = this.#text;
    const i = this.#i;
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // A string starting with an escape is rare: the slow path finds its kind.
      if (text.charCodeAt(i + 1) === BACKSLASH) return -1;
      const kind = kindOfString(text, i + 1);
      this.#i = this.#stringEnd(i, true);
      return this.#i < 0 ? -1 : kind;
    }
    if (c === OPEN_OBJECT) {
      const walked = recorded !== -2 && pathLength < DEEPEST_PATH;
      return this.#object(walked ? recorded : -2, pathLength + 1, depth + 1) ? OBJECT : -1;
    }
    if (c === OPEN_ARRAY) return this.#array(depth + 1) ? ARRAY : -1;
    if (c === MINUS || isDigit(c)) {
      const j = numberEnd(text, i, this.#end);
      if (j < 0 || !isCompactNumber(text, i, j)) return -1;
      this.#i = j;
      return NUMBER;
    }
    if (sameAt(text, i, 'true')) {
      this.#i = i + 4;
      return BOOLEAN;
    }
    if (sameAt(text, i, 'false')) {
      this.#i = i + 5;
      return BOOLEAN;
    }
    if (sameAt(text, i, 'null')) {
      this.#i = i + 4;
      return 0;
    }
    return -1;
  }

  /** The array at `#i`: its values are checked, their keys not recorded (arrays are not walked). */
  #array(depth: number): boolean {
    if (depth > DEEPEST_NESTING) return false;
    const text = this.#text;
    this.#i++;
    if (text.charCodeAt(this.#i) === CLOSE_ARRAY) {
      this.#i++;
      return true;
    }
    for (;;) {
      if (this.#value(-2, DEEPEST_PATH, depth) < 0) return false;
      const c = text.charCodeAt(this.#i++);
      if (c === CLOSE_ARRAY) return true;
      if (c !== COMMA) return false;
    }
  }

  /**
   * Past the closing quote of the string opening at `i`, or -1 unless it is written as
   * `JSON.stringify` writes it: characters as they are except `"`, `\` and controls, escaped as
   * `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t` or `\u00xx` (lower-case), and no half surrogate
   * pair. Keys (`escapes` false) take no escape at all, so their text is their name.
   */
  #stringEnd(i: number, escapes: boolean): number {
    const text = this.#text;
    const end = this.#end;
    for (let j = i + 1; j < end; j++) {
      const c = text.charCodeAt(j);
      if (c === QUOTE) return j + 1;
      if (c < 0x20) return -1;
      if (c === BACKSLASH) {
        if (!escapes) return -1;
        const e = text.charCodeAt(++j);
        if (SHORT_ESCAPE[e] === true) continue;
        if (e !== LETTER_U || !isControlEscape(text, j + 1)) return -1;
        j += 4;
      } else if (c >= 0xd800 && c <= 0xdfff) {
        const next = text.charCodeAt(j + 1);
        if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return -1;
        j++;
      }
    }
    return -1;
  }
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

/** Escapes `JSON.stringify` writes as two characters: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`. */
const SHORT_ESCAPE: boolean[] = [];
for (const c of '"\\bfnrt') SHORT_ESCAPE[c.charCodeAt(0)] = true;

/** Whether `text` at `at` holds `00xx` (lower-case hex) for a control that has no short escape. */
function isControlEscape(text: string, at: number): boolean {
  if (!text.startsWith('00', at)) return false;
  const hex = text.slice(at + 2, at + 4);
  if (!/^[01][0-9a-f]$/.test(hex)) return false;
  const code = Number.parseInt(hex, 16);
  return code !== 0x08 && code !== 0x09 && code !== 0x0a && code !== 0x0c && code !== 0x0d;
}

/**
 * Whether `text` holds `word` at `at`. A loop over the characters: `startsWith` with a position
 * costs several times more in a scan that calls it for every key.
 */
function sameAt(text: string, at: number, word: string): boolean {
  for (let k = 0; k < word.length; k++) {
    if (text.charCodeAt(at + k) !== word.charCodeAt(k)) return false;
  }
  return true;
}

/** Past JSON's white space (space, tab, line feed, carriage return) from `i`, up to `end`. */
function skipSpace(text: string, i: number, end: number): number {
  while (i < end) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return i;
    i++;
  }
  return i;
}

function isDigit(c: number): boolean {
  return c >= DIGIT_0 && c <= DIGIT_9;
}

/** Past the JSON number at `i` (`-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`), or -1 if none. */
function numberEnd(text: string, i: number, end: number): number {
  if (text.charCodeAt(i) === MINUS) i++;
  const first = text.charCodeAt(i);
  if (first === DIGIT_0) i++;
  else if (isDigit(first)) while (i < end && isDigit(text.charCodeAt(i))) i++;
  else return -1;
  if (text.charCodeAt(i) === DOT) {
    if (!isDigit(text.charCodeAt(++i))) return -1;
    while (i < end && isDigit(text.charCodeAt(i))) i++;
  }
  const e = text.charCodeAt(i);
  if (e === 0x65 || e === 0x45) {
    const sign = text.charCodeAt(++i);
    if (sign === 0x2b || sign === MINUS) i++;
    if (!isDigit(text.charCodeAt(i))) return -1;
    while (i < end && isDigit(text.charCodeAt(i))) i++;
  }
  return i > end ? -1 : i;
}

/**
 * Whether the number `text[start, end)` is written as `JSON.stringify` writes its value. An
 * integer of at most 15 digits (not `-0`) always is; anything else is compared with it.
 */
function isCompactNumber(text: string, start: number, end: number): boolean {
  const digits = end - start - (text.charCodeAt(start) === MINUS ? 1 : 0);
  if (
    digits <= 15 &&
    !(digits === 1 && end - start === 2 && text.charCodeAt(end - 1) === DIGIT_0)
  ) {
    let plain = true;
    for (let i = end - digits; i < end && plain; i++) plain = isDigit(text.charCodeAt(i));
    if (plain) return true;
  }
  const written = text.slice(start, end);
  return String(Number(written)) === written;
}
