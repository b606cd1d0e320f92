/**
 * A payload text with each number that a double holds exactly written as `JSON.stringify` writes
 * it (`1.0` → `1`, `1e2` → `100`, `1.50` → `1.5`, `-0.0` → `0`), and every other byte as sent.
 * The number rule reads a number's string form as that text, so a payload sent as a string is
 * stored this way and each driver reads the same text. A number a double cannot hold (an id of
 * 20 digits, a decimal of 30) keeps its digits, since rewriting it would lose them; numbers
 * beyond a double's range are left for the payload checks to refuse.
 *
 * `text` must already be valid JSON (the caller has parsed it): outside strings, a token starting
 * with `-` or a digit is then a number.
 */
export function canonicalNumberTexts(text: string): string {
  let out = '';
  let copied = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i + 1);
      continue;
    }
    if (c !== MINUS && (c < ZERO || c > NINE)) {
      i++;
      continue;
    }
    let end = i + 1;
    while (end < text.length && NUMBER_BYTES.has(text.charCodeAt(end))) end++;
    const token = text.slice(i, end);
    const value = Number(token);
    const canonical = JSON.stringify(value);
    if (canonical !== token && Number.isFinite(value) && sameDecimal(token, canonical)) {
      out += text.slice(copied, i) + canonical;
      copied = end;
    }
    i = end;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
/** What may follow a number's first character: digits, `.`, `e`, `E`, `+`, `-`. */
const NUMBER_BYTES = new Set([...'0123456789.eE+-'].map((ch) => ch.charCodeAt(0)));

/** The index just past the string whose first character (after its opening quote) is at `i`. */
function stringEnd(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) i += 2;
    else if (c === QUOTE) return i + 1;
    else i++;
  }
  return i;
}

/**
 * Whether two JSON number texts denote the same decimal number (zero of either sign counts as
 * one): sign, significant digits and the exponent of the last one.
 */
function sameDecimal(a: string, b: string): boolean {
  return decimalOf(a) === decimalOf(b);
}

/** `-1.50e3` → `-15e2`: the sign, the digits without leading or trailing zeros, the exponent. */
function decimalOf(text: string): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) return text;
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  let digits = `${whole}${fraction}`.replace(/^0+/, '');
  if (digits === '') return '0';
  let power = Number(exponent) - fraction.length;
  const trailing = digits.length - digits.replace(/0+$/, '').length;
  digits = digits.slice(0, digits.length - trailing);
  power += trailing;
  return `${sign}${digits}e${power}`;
}
