import { describe, expect, test } from 'vitest';
import { CompactLineScanner, scanCompactText } from '../src/ingest/compact-line.ts';
import { KeyDiscovery } from '../src/ingest/discover-keys.ts';
import { parseNdjsonLines } from '../src/ingest/parse-ndjson.ts';
import { MAX_NESTING, toPayload, toTimestamp } from '../src/ingest/payload-checks.ts';
import { MAX_EVENT_KEYS } from '../src/storage/seen-key.ts';
import { random } from './helpers/fixture-events.ts';

/**
 * The loader's fast path against the slow one it stands in for: `JSON.parse` of the line, the
 * shared checks, `JSON.stringify` of the payload, and key discovery over the parsed object. A
 * line the scanner takes must come out exactly as the slow path has it; anything else it must
 * leave to the slow path.
 */

/** A line's bytes: its text in UTF-8, or bytes as they are (for ill-formed UTF-8). */
type LineBytes = string | Uint8Array;
const toBytes = (line: LineBytes) => (typeof line === 'string' ? Buffer.from(line) : line);

/**
 * What the slow path makes of a line: null when it refuses it. It reads the line as the loader
 * does, decoding its bytes strictly (ill-formed UTF-8 is refused).
 */
function slowPath(bytes: LineBytes) {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(toBytes(bytes)));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const { timestamp, json } = value as { timestamp?: unknown; json?: unknown };
  if (timestamp === undefined || timestamp === null || json === undefined || json === null) {
    return null;
  }
  const seconds = toTimestamp(timestamp);
  const payload = toPayload(json);
  if (seconds === null || typeof payload === 'string') return null;
  const discovery = new KeyDiscovery();
  discovery.add(payload.json);
  return { timestamp: seconds, payload: payload.payload, keys: discovery.keys };
}

/** 20 objects of 60 keys: 1,220 key paths in all, none of its objects wider than 64 keys. */
function wideObject(): Record<string, unknown> {
  const groups: Record<string, Record<string, number>> = {};
  for (let g = 0; g < 20; g++) {
    groups[`g${g}`] = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${i}`, i]));
  }
  return { a: groups };
}

/** What the scanner makes of a line: null when it leaves it to the slow path. */
function fastPath(line: LineBytes, scanner = new CompactLineScanner()) {
  // Scanned inside a longer buffer, as the loader does, so that nothing is read past the line.
  const before = Buffer.from('{"x":1}\n');
  const bytes = Buffer.concat([
    before,
    toBytes(line),
    Buffer.from('\n{"timestamp":1,"json":{"after":"line"}}'),
  ]);
  const start = before.length;
  if (!scanner.scan(bytes, start, start + toBytes(line).length)) return null;
  const discovery = new KeyDiscovery();
  discovery.addScanned(scanner);
  const digits = bytes.toString('latin1', scanner.timestampStart, scanner.timestampEnd);
  if (scanner.timestampStart >= 0) expect(Number(digits)).toBe(scanner.timestamp);
  return {
    timestamp: scanner.timestamp,
    payload: bytes.toString('utf8', scanner.payloadStart, scanner.payloadEnd),
    keys: discovery.keys,
  };
}

const line = (payload: string, timestamp = '1700000000') =>
  `{"timestamp":${timestamp},"json":${payload}}`;

describe('lines the scanner takes, with the slow path’s outcome', () => {
  test.each([
    ['a flat payload', line('{"event":"signup","n":3,"ok":true,"none":null}')],
    [
      'an object of 64 keys',
      line(JSON.stringify(Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`k${i}`, i])))),
    ],
    ['nested objects and arrays', line('{"a":{"b":{"c":[1,{"d":2}]}},"e":[]}')],
    ['white space around the payload', ` { "timestamp" : 1700000000 ,\t"json" : {"a":1} }\r`],
    ['the payload first', '{"json":{"a":1},"timestamp":5}'],
    ['short escapes and control escapes', line('{"s":"q\\"b\\\\\\b\\f\\n\\r\\t\\u0000\\u001f"}')],
    ['characters JSON.stringify leaves alone', line('{"s":"é🦆/\u007f\u2028","k é":1}')],
    ['numbers in their shortest form', line('{"a":0,"b":-5,"c":19.99,"d":1e+21,"e":5e-324}')],
    ['a fractional timestamp, floored', line('{"a":1}', '1700000000.9')],
    ['a timestamp with an exponent', line('{"a":1}', '17e8')],
    ['empty objects, arrays and strings', line('{"a":{},"b":[],"c":""}')],
    ['numeric strings', line('{"a":"42","b":" 7","c":"-1","d":".5","e":"+1","f":"x1"}')],
    ['keys deeper than discovery walks', line('{"a":{"b":{"c":{"d":{"e":{"f":{"g":1}}}}}}}')],
    [
      `${MAX_NESTING} levels`,
      line(`${'{"a":'.repeat(MAX_NESTING - 1)}{}${'}'.repeat(MAX_NESTING - 1)}`),
    ],
  ])('%s', (_, text) => {
    const slow = slowPath(text);
    expect(slow).not.toBeNull();
    expect(fastPath(text)).toEqual(slow);
  });
});

describe('lines left to the slow path', () => {
  test.each([
    ['white space inside the payload', line('{"a": 1}')],
    ['a number not in shortest form', line('{"a":1.0}')],
    ['an exponent JSON.stringify would not write', line('{"a":1e3}')],
    ['minus zero', line('{"a":-0}')],
    ['an integer past 2^53', line('{"a":12345678901234567890}')],
    ['16 digits that do not survive as a double', line('{"a":9007199254740993}')],
    ['an escaped slash', line('{"a":"x\\/"}')],
    ['a needless \\u escape', line('{"a":"x\\u00e9"}')],
    ['an upper-case \\u escape', line('{"a":"x\\u001F"}')],
    ...['08', '09', '0a', '0c', '0d'].map((hex) => [
      `\\u00${hex}, which has a short form`,
      line(`{"a":"x\\u00${hex}"}`),
    ]),
    ['an escaped surrogate pair', line('{"a":"x\\ud83e\\udd86"}')],
    ['a string starting with an escape', line('{"a":"\\tx"}')],
    ['an escape in a key', line('{"\\u0061":1}')],
    ['a key twice', line('{"a":1,"b":2,"a":3}')],
    ['a key twice in a nested object', line('{"o":{"a":1,"a":2}}')],
    ['a key twice inside an array', line('{"l":[{"a":1,"a":2}]}')],
    ['a key starting with a digit', line('{"b":1,"2":0}')],
    [
      'an object of more than 64 keys',
      line(JSON.stringify(Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i])))),
    ],
    ['the payload as a string', line('"{\\"a\\":1}"')],
    ['a timestamp as a string', line('{"a":1}', '"1700000000"')],
    ['another key in the line', '{"timestamp":1,"json":{"a":1},"extra":true}'],
    ['the timestamp twice', '{"timestamp":1,"timestamp":2,"json":{"a":1}}'],
  ])('%s', (_, text) => {
    expect(fastPath(text)).toBeNull();
    // Each of these the slow path accepts: leaving it is about form, not validity.
    expect(slowPath(text)).not.toBeNull();
  });

  /** A line whose payload's string value holds `bytes` between an `x` and a `y`. */
  const withBytes = (...bytes: number[]) =>
    Buffer.concat([
      Buffer.from('{"timestamp":1700000000,"json":{"a":"x'),
      Buffer.from(bytes),
      Buffer.from('y"}}'),
    ]);

  test.each([
    ['an encoded surrogate (CESU-8)', withBytes(0xed, 0xa0, 0x80)],
    ['an overlong slash', withBytes(0xc0, 0xaf)],
    ['an overlong three-byte form', withBytes(0xe0, 0x80, 0xaf)],
    ['an overlong four-byte form', withBytes(0xf0, 0x80, 0x80, 0xaf)],
    ['a stray continuation byte', withBytes(0x80)],
    ['a sequence cut short', withBytes(0xe2, 0x82)],
    ['a code point past U+10FFFF', withBytes(0xf4, 0x90, 0x80, 0x80)],
    ['a byte never used in UTF-8', withBytes(0xff)],
    [
      'a lead byte before a quote',
      Buffer.from([...withBytes(0xc3).subarray(0, -3), 0x22, 0x7d, 0x7d]),
    ],
  ])(
    'ill-formed UTF-8, %s: left to the slow path, which refuses the line naming the field',
    (_, bytes) => {
      expect(fastPath(bytes)).toBeNull();
      expect(slowPath(bytes)).toBeNull();
      const { bad } = parseNdjsonLines(Buffer.concat([Buffer.from('\n'), bytes]), 1, {
        scanned: () => expect.unreachable(),
        parsed: () => expect.unreachable(),
      });
      expect(bad).toEqual([{ line: 2, reason: 'json: field "a" is not valid UTF-8' }]);
    },
  );

  test.each([
    ['two bytes', 'é'],
    ['three bytes', '€'],
    ['four bytes', '🦆'],
    ['the last code point', '\u{10ffff}'],
    ['the code points around the surrogates', '\ud7ff\ue000'],
  ])('well-formed UTF-8, %s: taken, byte for byte', (_, text) => {
    const bytes = Buffer.from(line(JSON.stringify({ a: `x${text}y`, [text]: 1 })));
    expect(fastPath(bytes)).toEqual(slowPath(bytes));
    expect(fastPath(bytes)?.payload).toContain(text);
  });

  test.each([
    ['not JSON', line('{"a":1')],
    ['a control character in a string', line('{"a":"x\u0001"}')],
    ['the last control character', line('{"a":"x\u001f"}')],
    ['a trailing comma', line('{"a":1,}')],
    ['a leading zero', line('{"a":01}')],
    ['a bare dot', line('{"a":1.}')],
    ['no timestamp', '{"json":{"a":1}}'],
    ['no payload', '{"timestamp":1}'],
    ['a negative timestamp', line('{"a":1}', '-1')],
    ['a timestamp in milliseconds', line('{"a":1}', '1700000000000000')],
    ['an array payload', line('[1]')],
    ['text after the line', `${line('{"a":1}')} x`],
    ['a truncated literal', line('{"a":tru}')],
    ['a number too large for a double', line('{"a":1e999}')],
    [
      `${MAX_NESTING + 1} levels`,
      line(`${'{"a":'.repeat(MAX_NESTING)}{}${'}'.repeat(MAX_NESTING)}`),
    ],
  ])('%s: refused by both', (_, text) => {
    expect(fastPath(text)).toBeNull();
    expect(slowPath(text)).toBeNull();
  });
});

test('an event of more key paths than MAX_EVENT_KEYS: refused on both paths, naming the limit', () => {
  const compact = line(JSON.stringify(wideObject()));
  const spaced = line(JSON.stringify(wideObject(), null, 1).replaceAll('\n', ''));
  const { bad } = parseNdjsonLines(Buffer.from(`${compact}\n${spaced}\n`), 1, {
    scanned: () => expect.unreachable(),
    parsed: () => expect.unreachable(),
  });
  const reason = `json: holds more than ${MAX_EVENT_KEYS} keys (key paths up to 6 levels deep, objects included); split it into several events`;
  expect(bad).toEqual([
    { line: 1, reason },
    { line: 2, reason },
  ]);
  // The compact line is one the scanner takes: the limit holds on the fast path too.
  expect(fastPath(compact)).not.toBeNull();
});

describe('payload texts on their own (bulk-log)', () => {
  const keysOf = (json: Record<string, unknown>) => {
    const discovery = new KeyDiscovery();
    discovery.add(json);
    return discovery.keys;
  };
  const scanned = (scanner: CompactLineScanner) => {
    const discovery = new KeyDiscovery();
    discovery.addScanned(scanner);
    return discovery.keys;
  };

  test.each([
    ['a flat payload', '{"event":"signup","n":3,"ok":true,"none":null}'],
    ['nested objects and arrays', '{"a":{"b":{"c":[1,{"d":2}]}},"e":[]}'],
    ['characters past ASCII', '{"s":"é🦆\u2028","k é":"€"}'],
    ['the empty object', '{}'],
  ])('taken: %s, with the keys JSON.parse finds', (_, text) => {
    const scanner = new CompactLineScanner();
    expect(scanCompactText(text, scanner)).toBe(true);
    expect(scanned(scanner)).toEqual(keysOf(JSON.parse(text)));
  });

  test.each([
    ['white space', '{"a": 1}'],
    ['white space around it', ' {"a":1}'],
    ['text after it', '{"a":1}x'],
    ['an array', '[1]'],
    ['a key twice', '{"a":1,"a":"x"}'],
    ['a half surrogate pair', '{"a":"x\ud800"}'],
    ['a lone low surrogate in a key', '{"\udc00":1}'],
    ['a long text', `{"a":"${'x'.repeat(100_000)}","b":1e3}`],
  ])('left to the slow path: %s', (_, text) => {
    expect(scanCompactText(text, new CompactLineScanner())).toBe(false);
  });

  test('a long text in compact form is taken too (the byte buffer grows)', () => {
    const text = JSON.stringify({ a: 'é'.repeat(100_000), b: 1 });
    const scanner = new CompactLineScanner();
    expect(scanCompactText(text, scanner)).toBe(true);
    expect(scanned(scanner)).toEqual(keysOf(JSON.parse(text)));
  });
});

describe('generated lines: the fast path agrees with the slow path', () => {
  const next = random(20261122);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const KEYS = ['event', 'price', 'a', 'b', 'é', '🦆', 'x y', '__proto__', '1', '07', 'k"q', ''];
  const STRINGS = [
    '',
    'plain',
    '42',
    ' 7.5',
    '-3',
    'é',
    '🦆',
    '\u0001',
    '\n',
    '"',
    '\\',
    '/',
    '\u2028',
    '\ud800',
    '\udc00x',
  ];
  const NUMBERS = [0, -0, 1, -17, 19.99, 0.1, 1e21, 1.5e-7, 2 ** 53 + 2, 123456789012345, 5e-324];

  function value(depth: number): unknown {
    const r = next();
    if (depth > 4 || r < 0.3) return pick(NUMBERS);
    if (r < 0.55) return pick(STRINGS) + (next() < 0.5 ? pick(STRINGS) : '');
    if (r < 0.62) return pick([true, false, null]);
    if (r < 0.75) return Array.from({ length: Math.floor(next() * 3) }, () => value(depth + 1));
    return object(depth + 1);
  }
  function object(depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const n = Math.floor(next() * 5);
    for (let i = 0; i < n; i++) out[pick(KEYS) + (next() < 0.7 ? '' : pick(KEYS))] = value(depth);
    return out;
  }
  /** Text for a payload: mostly compact, sometimes rewritten the ways other writers differ. */
  function write(payload: Record<string, unknown>): string {
    const compact = JSON.stringify(payload);
    switch (Math.floor(next() * 10)) {
      case 0:
        return JSON.stringify(payload, null, 1);
      case 1:
        return compact.replace(/\d+(?=[,}\]])/, (n) => `${n}.0`);
      case 2:
        return compact.replace(/é|🦆/, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
      case 3:
        return compact.replace(/\\u00([0-9a-f]{2})/, (_, h: string) => `\\u00${h.toUpperCase()}`);
      case 4:
        // A key written twice, or a line cut short or with a character changed.
        return compact.replace(/^\{"([^"\\]*)":/, (m, k: string) => `{"${k}":0,${m.slice(1)}`);
      case 5: {
        const at = Math.floor(next() * compact.length);
        return next() < 0.5
          ? compact.slice(0, at)
          : compact.slice(0, at) +
              pick(['"', ',', '}', ']', ' ', '\\', '0']) +
              compact.slice(at + 1);
      }
      default:
        return compact;
    }
  }

  test('5,000 lines, one scanner for all, keys merged across lines the same way', () => {
    const scanner = new CompactLineScanner();
    const fastKeys = new KeyDiscovery();
    const slowKeys = new KeyDiscovery();
    let fast = 0;
    let illFormed = 0;
    for (let i = 0; i < 5000; i++) {
      const payload = object(0);
      const text = line(write(payload), String(pick([0, 1700000000, 1.5, 253402300799])));
      let bytes = Buffer.from(text);
      // Now and then a byte of a character past ASCII is replaced: ill-formed UTF-8.
      const wide = bytes.findIndex((b) => b >= 0x80);
      if (wide >= 0 && next() < 0.2) {
        bytes = Buffer.from(bytes);
        bytes[wide + Math.floor(next() * 2)] = pick([0x22, 0x41, 0x80, 0xc0, 0xed, 0xff]);
        illFormed++;
      }
      const slow = slowPath(bytes);
      const found = fastPath(bytes, scanner);
      if (found) {
        fast++;
        expect(found, text).toEqual(slow);
        fastKeys.addScanned(scanner);
        slowKeys.add(JSON.parse(bytes.toString('utf8')).json);
      }
    }
    expect(illFormed).toBeGreaterThan(100);
    expect(fastKeys.keys).toEqual(slowKeys.keys);
    // The generator makes both kinds in numbers: the comparison above is not vacuous.
    expect(fast).toBeGreaterThan(1000);
    expect(fast).toBeLessThan(5000);
  });

  test('5,000 payload texts (bulk-log): taken only as the slow path takes them, same keys', () => {
    const scanner = new CompactLineScanner();
    const fastKeys = new KeyDiscovery();
    const slowKeys = new KeyDiscovery();
    let fast = 0;
    for (let i = 0; i < 5000; i++) {
      const text = write(object(0));
      const slow = toPayload(text);
      if (scanCompactText(text, scanner)) {
        fast++;
        expect(typeof slow, text).toBe('object');
        fastKeys.addScanned(scanner);
        slowKeys.add((slow as { json: Record<string, unknown> }).json);
      }
    }
    expect(fastKeys.keys).toEqual(slowKeys.keys);
    expect(fast).toBeGreaterThan(1000);
    expect(fast).toBeLessThan(5000);
  });
});
