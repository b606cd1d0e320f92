import { describe, expect, test } from 'vitest';
import { discoverObjectKeys, mergeKeys } from '../src/ingest/discover-keys.ts';
import { MAX_NESTING, nestedDeeperThan, toPayload } from '../src/ingest/payload-checks.ts';

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
