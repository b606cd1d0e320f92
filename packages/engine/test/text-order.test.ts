import { describe, expect, test } from 'vitest';
import { compareText } from '../src/text-order.ts';

/** The order DuckDB and ClickHouse give text, computed apart: UTF-8 bytes. */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

describe('compareText', () => {
  test('orders across the surrogate range as UTF-8 bytes do, not as UTF-16 units', () => {
    // U+FF21 (fullwidth A) is below U+1F600 (an emoji), whose UTF-16 form starts 0xD83D.
    expect('\uff21' < '😀').toBe(false);
    expect(compareText('\uff21', '😀')).toBeLessThan(0);
    expect(compareText('😀', '\uff21')).toBeGreaterThan(0);
    expect(compareText('a😀', 'a\ue000')).toBeGreaterThan(0);
    expect(compareText('ab', 'ab')).toBe(0);
    expect(compareText('ab', 'abc')).toBeLessThan(0);
  });

  test('agrees with the byte order on generated strings around every boundary', () => {
    // Code points on each side of the ranges where UTF-16 and UTF-8 orders part.
    const points = [
      0x00, 0x41, 0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xf8ff, 0xff21, 0xfffd, 0xffff, 0x10000,
      0x1f600, 0x10ffff,
    ];
    const strings = [''];
    for (const a of points) {
      strings.push(String.fromCodePoint(a));
      for (const b of points) strings.push(String.fromCodePoint(a, b));
    }
    let pairs = 0;
    for (const a of strings) {
      for (const b of strings) {
        expect(Math.sign(compareText(a, b)), `${escape(a)} ${escape(b)}`).toBe(
          Math.sign(byBytes(a, b)),
        );
        pairs++;
      }
    }
    expect(pairs).toBe(strings.length ** 2);
  });
});
