import { describe, expect, it } from 'vitest';
import { incompleteBuckets, isBucketStart } from '../src/index.ts';

// UTC readings worked out by hand; see time-value.test.ts for the zones' 2024 rules.
const utc = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) =>
  Date.UTC(y, mo - 1, d, h, mi, s) / 1000;
const LA = 'America/Los_Angeles';
const KOLKATA = 'Asia/Kolkata';

describe('isBucketStart', () => {
  it.each([
    [utc(2024, 3, 5, 8), 'Day', LA, true], // 00:00 PST
    [utc(2024, 3, 11, 7), 'Day', LA, true], // 00:00 PDT, the day after spring-forward
    [utc(2024, 3, 11, 8), 'Day', LA, false], // 01:00 PDT
    [utc(2024, 3, 11, 8), 'Hour', LA, true],
    [utc(2024, 3, 11, 8, 30), 'Hour', LA, false],
    [utc(2024, 3, 11, 8, 30), 'Minute', LA, true],
    [utc(2024, 3, 11, 8, 30, 1), 'Minute', LA, false],
    [utc(2024, 3, 4, 8), 'Week', LA, true], // Monday 4 March, 00:00 PST
    [utc(2024, 3, 5, 8), 'Week', LA, false], // a Tuesday
    [utc(2024, 3, 1, 8), 'Month', LA, true],
    [utc(2024, 4, 1, 7), 'Month', LA, true], // 1 April, PDT
    [utc(2024, 4, 1, 8), 'Month', LA, false],
    [utc(2024, 3, 4, 18, 30), 'Day', KOLKATA, true], // 5 March 00:00 IST
    [utc(2024, 3, 4, 18, 0), 'Hour', KOLKATA, false], // 23:30 IST: not on the hour there
    [utc(2024, 3, 4, 18, 0) + 0.5, 'Minute', KOLKATA, false],
  ] as const)('%i as %s in %s is %s', (seconds, granularity, zone, expected) => {
    expect(isBucketStart(seconds, granularity, zone)).toBe(expected);
  });
});

describe('incompleteBuckets', () => {
  it('flags a window that ends now, inside today', () => {
    expect(
      incompleteBuckets({ start: utc(2024, 3, 4, 8), end: utc(2024, 3, 11, 19, 17) }, 'Day', LA),
    ).toEqual({ first: false, last: true });
  });
  it('flags a start in the middle of a day, and accepts the second before midnight', () => {
    expect(
      incompleteBuckets({ start: utc(2024, 3, 4, 20), end: utc(2024, 3, 11, 7) }, 'Day', LA),
    ).toEqual({ first: true, last: false });
    expect(
      incompleteBuckets({ start: utc(2024, 3, 4, 8) - 1, end: utc(2024, 3, 11, 7) }, 'Day', LA),
    ).toEqual({ first: false, last: false });
  });
});
