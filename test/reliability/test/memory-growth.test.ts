/**
 * The load item's memory verdicts (`rssGrowth`, `heapGrowth`) on sample series worked out by hand: a heap that
 * climbs and falls between collections without a trend is no growth, wherever the run happens to
 * end in the cycle; a level after collection that keeps rising is growth.
 */
import { describe, expect, test } from 'vitest';
import { type HeapSample, heapGrowth, rssGrowth } from '../src/load-run.ts';
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

describe('heapGrowth', () => {
  const probes = (levels: [heap: number, external: number][]): HeapSample[] =>
    levels.map(([heap, external], i) => ({
      atMs: 7000 + i * 2000,
      heapUsed: heap * MB,
      external: external * MB,
    }));

  test('judges the heap and the Buffers together, lowest probe of each window', () => {
    // Probes at 7, 9, 11 s (first window, lowest 16.3 + 3.7 = 20) and 13, 15, 17 s (last window,
    // lowest 17.6 + 3.7 = 21.3): growth 21.3 / 20 - 1 = 6.5%.
    const verdict = heapGrowth(
      probes([
        [16.7, 3.7],
        [16.3, 3.7],
        [16.9, 3.7],
        [17.6, 3.7],
        [18.0, 3.7],
        [17.9, 3.7],
      ]),
      7,
      6,
    );
    expect(verdict.baseline).toBeCloseTo(20 * MB, 0);
    expect(verdict.final).toBeCloseTo(21.3 * MB, 0);
    expect(verdict.growth).toBeCloseTo(21.3 / 20 - 1, 10);
    expect(verdict.peak).toBeCloseTo(21.7 * MB, 0);
  });

  test('Buffers that pile up while the heap stays flat are growth', () => {
    // 16.5 MB of heap throughout; Buffers 3.7 → 6.0 MB: (16.5 + 6.0) / (16.5 + 3.7) - 1 = 11.4%.
    const verdict = heapGrowth(
      probes([
        [16.5, 3.7],
        [16.5, 3.8],
        [16.5, 4.1],
        [16.5, 6.0],
        [16.5, 6.4],
        [16.5, 6.8],
      ]),
      7,
      6,
    );
    expect(verdict.growth).toBeCloseTo(22.5 / 20.2 - 1, 10);
    expect(verdict.growth).toBeGreaterThan(0.1);
  });
});
