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
    // Lord Howe, 2024-10-06 02:00 +10:30 -> 02:30 +11: the 02:00 hour starts at 02:30.
    [utc(2024, 10, 5, 15, 30), 'Hour', 'Australia/Lord_Howe', true],
    [utc(2024, 10, 5, 15, 30) + 1, 'Hour', 'Australia/Lord_Howe', false],
    // Lord Howe, 2024-04-07 02:00 +11 -> 01:30 +10:30: the clock set back starts a new 01:00 hour.
    [utc(2024, 4, 6, 15), 'Hour', 'Australia/Lord_Howe', true],
    // Kathmandu, 1986-01-01 00:00 +5:30 -> 00:15 +5:45.
    [utc(1985, 12, 31, 18, 30), 'Hour', 'Asia/Kathmandu', true],
    [utc(1985, 12, 31, 18, 30), 'Minute', 'Asia/Kathmandu', true],
    // Monrovia, 1972-01-07 00:00 -0:44:30 -> 00:44:30 +0: the 00:44 minute starts at 00:44:30.
    [utc(1972, 1, 7, 0, 44, 30), 'Minute', 'Africa/Monrovia', true],
    [utc(1972, 1, 7, 0, 44, 30), 'Hour', 'Africa/Monrovia', true],
    [utc(1972, 1, 7, 0, 45), 'Minute', 'Africa/Monrovia', true],
    [utc(1972, 1, 7, 0, 45, 30), 'Minute', 'Africa/Monrovia', false],
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
