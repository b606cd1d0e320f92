/**
 * The load item's memory verdict (`rssGrowth`) on sample series worked out by hand: a heap that
 * climbs and falls between collections without a trend is no growth, wherever the run happens to
 * end in the cycle; a level after collection that keeps rising is growth.
 */
import { describe, expect, test } from 'vitest';
import { rssGrowth } from '../src/load-run.ts';
import type { RssSample } from '../src/rss-sampler.ts';

const MB = 2 ** 20;
const series = (mbs: number[]): RssSample[] =>
  mbs.map((mb, i) => ({ atMs: i * 1000, rss: mb * MB }));

describe('rssGrowth', () => {
  // The edge's RSS as sampled in a 40 s run (no trend): warm-up, then crests of up to 173 MB.
  const sawtooth = [
    102, 146, 149, 155, 155, 154, 154, 154, 148, 146, 146, 146, 148, 149, 149, 149, 149, 149, 145,
    145, 145, 145, 151, 156, 145, 145, 152, 158, 165, 170, 173, 173,
  ];

  test('a sawtooth ending on its crest is no growth', () => {
    // Warm-up 7 s, windows of 6 s: the first window (7-12 s) is 154 148 146 146 146 148, lowest
    // 146; the last (26-31 s) is 152 158 165 170 173 173, lowest 152.
    const verdict = rssGrowth(series(sawtooth), 7, 6);
    expect(verdict.baseline).toBe(146 * MB);
    expect(verdict.final).toBe(152 * MB);
    expect(verdict.growth).toBeCloseTo(152 / 146 - 1, 10);
    expect(verdict.growth).toBeLessThan(0.1);
    expect(verdict.peak).toBe(173 * MB);
    expect(verdict.samples).toBe(sawtooth.length);
  });

  test('the same series judged on two-second windows reads as growth', () => {
    // 7-8 s: 154 148; 30-31 s: 173 173, all crest.
    expect(rssGrowth(series(sawtooth), 7, 2).growth).toBeCloseTo(173 / 148 - 1, 10);
  });

  test('a level after collection that rises 3 MB a second is growth', () => {
    // 140 + 3 s, with 12 MB of garbage in two samples of every three.
    const leak = Array.from({ length: 20 }, (_, i) => 140 + 3 * i + (i % 3 === 0 ? 0 : 12));
    // 7-12 s: 173 176 167 182 185 176, lowest 167; 14-19 s: 194 185 200 203 194 209, lowest 185.
    const verdict = rssGrowth(series(leak), 7, 6);
    expect(verdict.baseline).toBe(167 * MB);
    expect(verdict.final).toBe(185 * MB);
    expect(verdict.growth).toBeGreaterThan(0.1);
  });
});
