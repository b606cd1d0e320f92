import { describe, expect, test } from 'vitest';
import { discoverObjectKeys, mergeKeys } from '../src/ingest/discover-keys.ts';
import {
  holdsMoreKeysThan,
  MAX_NESTING,
  nestedDeeperThan,
  TOO_WIDE,
  textHoldsMoreKeysThan,
  toPayload,
} from '../src/ingest/payload-checks.ts';
import { MAX_EVENT_KEYS } from '../src/storage/seen-key.ts';

/** The per-event checks shared by the endpoints and the loader, on hand-worked inputs. */

describe('nestedDeeperThan', () => {
  test.each([
    ['{}', 1, false],
    ['{}', 0, true],
    ['{"a":[{"b":[]}]}', 4, false],
    ['{"a":[{"b":[]}]}', 3, true],
    ['{"a":[],"b":[],"c":{}}', 2, false],
    // Brackets in strings, escaped quotes included, are not nesting.
    ['{"a":"[[[{{{"}', 1, false],
    ['{"a":"\\\\"}', 1, false],
    ['{"a":"\\"[[[[","b":[]}', 2, false],
    ['{"a":"\\"[[[[","b":[[]]}', 2, true],
  ])('%s within %i levels: deeper %s', (text, limit, deeper) => {
    expect(nestedDeeperThan(text, limit)).toBe(deeper);
  });
});

describe('toPayload', () => {
  const deepObject = (depth: number) => JSON.parse(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
  const tooDeep = `nested deeper than ${MAX_NESTING} levels`;
  test(`${MAX_NESTING} levels pass, one more does not, as an object or as text`, () => {
    expect(typeof toPayload(deepObject(MAX_NESTING))).toBe('object');
    expect(toPayload(deepObject(MAX_NESTING + 1))).toBe(tooDeep);
    expect(typeof toPayload(JSON.stringify(deepObject(MAX_NESTING)))).toBe('object');
    expect(toPayload(JSON.stringify(deepObject(MAX_NESTING + 1)))).toBe(tooDeep);
  });
  test('an object too deep for JSON.stringify is refused, not thrown', () => {
    expect(toPayload(deepObject(100_000))).toBe(tooDeep);
  });
  test('a lone surrogate deep down is found (the check runs after the nesting check)', () => {
    const text = `${'{"a":'.repeat(200)}"\\ud800"${'}'.repeat(200)}`;
    expect(toPayload(text)).toBe(
      'contains half a UTF-16 surrogate pair, which is not valid Unicode',
    );
  });
});

describe('mergeKeys', () => {
  test('each path once, with the kinds of every discovery, parents first', () => {
    const one = discoverObjectKeys([{ a: 1, d: { e: 'x' } }]);
    const two = discoverObjectKeys([{ a: 'word', b: [1] }, { d: { e: 2 } }]);
    const merged = mergeKeys([one, two]);
    expect(merged.map((k) => [k.path.join('.'), [...k.kinds].sort()])).toEqual([
      ['a', ['number', 'string']],
      ['d', ['object']],
      ['d.e', ['number', 'string']],
      ['b', ['array']],
    ]);
  });
});

describe('discoverObjectKeys', () => {
  test('every kind of value, nulls as missing, objects walked into', () => {
    const keys = discoverObjectKeys([
      { s: 'word', q: '12', b: true, n: 1.5, a: [1], o: { x: null, y: ' 3' }, z: null },
      { s: 7, o: { x: 'x' } },
    ]);
    expect(keys.map((k) => [k.path.join('.'), [...k.kinds].sort()])).toEqual([
      ['s', ['number', 'string']],
      ['q', ['numeric string']],
      ['b', ['boolean']],
      ['n', ['number']],
      ['a', ['array']],
      ['o', ['object']],
      ['o.x', ['string']],
      ['o.y', ['numeric string']],
      ['z', []],
    ]);
  });

  test('a string may read as a number when it starts with a digit, sign, dot or white space', () => {
    // The second method: the rule as a regular expression over every first character of the
    // Basic Multilingual Plane (the discovery looks characters below 128 up in a table).
    const rule = /^[\s\d+\-.]/;
    const mismatches: number[] = [];
    for (let c = 0; c < 0x10000; c++) {
      const value = `${String.fromCharCode(c)}1`;
      const [key] = discoverObjectKeys([{ v: value }]);
      const expected = rule.test(value) ? 'numeric string' : 'string';
      if (!key?.kinds.has(expected)) mismatches.push(c);
    }
    expect(mismatches).toEqual([]);
    expect([...(discoverObjectKeys([{ v: '' }])[0]?.kinds ?? [])]).toEqual(['string']);
  });
});

describe('the per-event key limit', () => {
  /** Key paths as key discovery counts them, written out by hand: `n` keys at each level. */
  const tree = (levels: number, n: number, leaf: unknown): Record<string, unknown> =>
    Object.fromEntries(
      Array.from({ length: n }, (_, i) => [
        `k:${i}"`,
        levels > 1 ? tree(levels - 1, n, leaf) : leaf,
      ]),
    );
  test.each([
    // 3 + 9 + 27 = 39 key paths.
    ['three levels', tree(3, 3, 'x:y'), 39],
    // Arrays are not looked into: their objects' keys are not paths.
    ['objects in arrays', { a: [{ b: 1, c: { d: 2 } }], e: 1 }, 2],
    // Six levels are counted, the seventh is not: 2 + 4 + … + 64 = 126.
    ['eight levels', tree(8, 2, 1), 126],
    ['colons and quotes in strings', { 'a:"b': 'c\\":{', d: { e: '[{' } }, 3],
  ])('%s: the text and the object count %i key paths alike', (_, object, paths) => {
    const text = JSON.stringify(object);
    expect(holdsMoreKeysThan(object, paths)).toBe(false);
    expect(holdsMoreKeysThan(object, paths - 1)).toBe(true);
    expect(textHoldsMoreKeysThan(text, paths)).toBe(false);
    expect(textHoldsMoreKeysThan(text, paths - 1)).toBe(true);
  });

  test(`an event of ${MAX_EVENT_KEYS} keys passes, one more is refused, as text or object`, () => {
    const at = Object.fromEntries(Array.from({ length: MAX_EVENT_KEYS }, (_, i) => [`k${i}`, i]));
    const over = { ...at, one: { more: 1 } };
    expect(typeof toPayload(at)).toBe('object');
    expect(typeof toPayload(JSON.stringify(at))).toBe('object');
    expect(toPayload(over)).toBe(TOO_WIDE);
    expect(toPayload(JSON.stringify(over, null, 1))).toBe(TOO_WIDE);
  });
});
