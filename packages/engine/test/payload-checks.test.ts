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
