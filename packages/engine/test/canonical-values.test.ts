import { describe, expect, test } from 'vitest';
import {
  OBJECT_VALUE,
  pathTree,
  valuesAt,
} from '../src/storage/clickhouse/clickhouse-canonical-values.ts';
import { random } from './helpers/fixture-events.ts';

/**
 * `valuesAt` (the one-pass reading of a compact payload's values at a few key paths, which
 * ClickHouse inserts use for the form columns) against `JSON.parse` and a walk through the
 * parsed objects, on generated payloads and paths.
 */

const KEYS = ['a', 'b', 'c', 'event', 'x y', 'é', ''];

/** What a walk of the parsed payload finds at `path`, as `valuesAt` writes it. */
function walk(payload: unknown, path: readonly string[]): unknown {
  let at = payload;
  for (const key of path) {
    if (at === null || typeof at !== 'object' || Array.isArray(at)) return undefined;
    if (!Object.hasOwn(at, key)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at !== null && typeof at === 'object' && !Array.isArray(at) ? OBJECT_VALUE : at;
}

function generate(r: () => number, depth: number): unknown {
  const pick = <T>(items: readonly T[]) => items[Math.floor(r() * items.length)] as T;
  const kind = Math.floor(r() * (depth > 0 ? 9 : 6));
  switch (kind) {
    case 0:
      return pick(['', 'purchase', 'x y', 'é ☃ 𝄞', '12.5', 'true', 'null', '{', ']', ',']);
    case 1:
      return pick([0, 1, -7, 3.25, 1e21, -1.5e-7, 2 ** 53 + 2, Number.MAX_VALUE, 5e-324]);
    case 2:
      return r() < 0.5;
    case 3:
      return null;
    case 4:
      return Math.floor(r() * 1000) / 8;
    case 5:
      return pick(['a,b', 'c}d', 'e:f']);
    case 6:
      return Array.from({ length: Math.floor(r() * 3) }, () => generate(r, depth - 1));
    default: {
      const object: Record<string, unknown> = {};
      for (let i = Math.floor(r() * 5); i > 0; i--) object[pick(KEYS)] = generate(r, depth - 1);
      return object;
    }
  }
}

describe('valuesAt', () => {
  test('finds what JSON.parse and a walk find, on 3,000 generated payloads', () => {
    const r = random(11);
    let arrays = 0;
    let found = 0;
    for (let n = 0; n < 3000; n++) {
      const payload: Record<string, unknown> = {};
      for (let i = 1 + Math.floor(r() * 6); i > 0; i--) {
        payload[KEYS[Math.floor(r() * KEYS.length)] as string] = generate(r, 3);
      }
      const text = JSON.stringify(payload);
      if (text.includes('\\')) continue;
      const paths = Array.from({ length: 1 + Math.floor(r() * 4) }, () =>
        Array.from({ length: 1 + Math.floor(r() * 3) }, () => KEYS[Math.floor(r() * KEYS.length)]),
      ) as string[][];
      const unique = [...new Map(paths.map((p) => [JSON.stringify(p), p])).values()];
      const expected = unique.map((path) => walk(JSON.parse(text), path));
      const values = new Array<unknown>(unique.length);
      const read = valuesAt(text, pathTree(unique), values);
      const parsed = JSON.parse(text);
      const anArray = unique.some((path) => {
        const at = path.reduce<unknown>(
          (v, key) =>
            v !== null && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, key)
              ? (v as Record<string, unknown>)[key]
              : undefined,
          parsed,
        );
        return Array.isArray(at);
      });
      if (anArray) {
        arrays++;
        expect(read, text).toBe(false);
        continue;
      }
      expect(read, text).toBe(true);
      expect(values, `${text} ${JSON.stringify(unique)}`).toEqual(expected);
      found += expected.filter((v) => v !== undefined).length;
    }
    // The cases reach both answers and many values.
    expect(arrays).toBeGreaterThan(100);
    expect(found).toBeGreaterThan(500);
  });

  test('a later path is found after the first ones, and the reading starts afresh each time', () => {
    const tree = pathTree([['a'], ['z', 'y']]);
    const values = new Array<unknown>(2);
    expect(valuesAt('{"a":1,"b":[1,{"c":2}],"z":{"y":"v"}}', tree, values)).toBe(true);
    expect(values).toEqual([1, 'v']);
    expect(valuesAt('{"z":{"y":false},"a":"x","q":[]}', tree, values)).toBe(true);
    expect(values).toEqual(['x', false]);
    expect(valuesAt('{"q":null}', tree, values)).toBe(true);
    expect(values).toEqual([undefined, undefined]);
  });
});
