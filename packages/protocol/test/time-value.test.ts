import { describe, expect, it } from 'vitest';
import {
  isValidTimeZone,
  parseTimeOffset,
  parseTimeValue,
  resolveTimeValue,
  shiftBack,
} from '../src/index.ts';

/**
 * Expected instants are worked out by hand from the zones' published rules and written as plain
 * UTC readings; `utc()` only converts a UTC reading to seconds, with no zone logic.
 *
 * America/Los_Angeles 2024: PST (UTC-8) until Sun 10 Mar 02:00 local, then PDT (UTC-7) until
 * Sun 3 Nov 02:00 local. Europe/London 2024: GMT until Sun 31 Mar 01:00 UTC, BST (UTC+1) until
 * Sun 27 Oct 01:00 UTC. Asia/Kolkata: IST (UTC+5:30) all year.
 */
const utc = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) =>
  Date.UTC(y, mo - 1, d, h, mi, s) / 1000;

const LA = 'America/Los_Angeles';
const LONDON = 'Europe/London';
const KOLKATA = 'Asia/Kolkata';

const at = (timeZone: string, now = 0) => ({ timeZone, now });

describe('absolute forms', () => {
  it.each([
    // Unix seconds, as a number and as a digit string
    [1710000000, LA, 1710000000],
    ['1710000000', LONDON, 1710000000],
    [0, KOLKATA, 0],
    // ISO 8601 with Z or an offset: the zone does not matter
    ['2024-03-10T10:00:00Z', LA, utc(2024, 3, 10, 10)],
    ['2024-03-10T02:00:00-08:00', LONDON, utc(2024, 3, 10, 10)],
    ['2024-03-10T15:30+05:30', LA, utc(2024, 3, 10, 10)],
    ['2024-03-10 10:00:00.250Z', LA, utc(2024, 3, 10, 10) + 0.25],
    ['2024-03-10T10:00:00+0000', LA, utc(2024, 3, 10, 10)],
    // ISO without offset: read on the zone's wall clock
    ['2024-03-10T01:30:00', LA, utc(2024, 3, 10, 9, 30)], // PST
    ['2024-03-10T03:30:00', LA, utc(2024, 3, 10, 10, 30)], // PDT
    ['2024-03-10T02:30:00', LA, utc(2024, 3, 10, 10, 30)], // skipped hour moves forward
    ['2024-11-03T01:30:00', LA, utc(2024, 11, 3, 8, 30)], // repeated hour: the earlier (PDT)
    ['2024-03-31T00:30:00', LONDON, utc(2024, 3, 31, 0, 30)], // GMT
    ['2024-03-31T02:30:00', LONDON, utc(2024, 3, 31, 1, 30)], // BST
    ['2024-10-27T01:30:00', LONDON, utc(2024, 10, 27, 0, 30)], // repeated hour: the earlier (BST)
    ['2024-03-10T00:00:00', KOLKATA, utc(2024, 3, 9, 18, 30)],
    // bare dates: midnight in the zone
    ['2024-03-10', LA, utc(2024, 3, 10, 8)],
    ['2024-03-11', LA, utc(2024, 3, 11, 7)],
    ['2024-10-27', LONDON, utc(2024, 10, 26, 23)],
    ['2024-10-28', LONDON, utc(2024, 10, 28, 0)],
    ['2024-06-01', KOLKATA, utc(2024, 5, 31, 18, 30)],
  ])('%j in %s', (value, zone, expected) => {
    expect(resolveTimeValue(value, at(zone))).toBe(expected);
  });
});

describe('MM/DD/YYYY h:mm am|pm, as clients send it', () => {
  it.each([
    ['03/14/2022 1:44 pm', LONDON, utc(2022, 3, 14, 13, 44)], // GMT in March 2022
    ['03/14/2022 1:44 PM', LONDON, utc(2022, 3, 14, 13, 44)],
    ['03/14/2022 1:44 Pm', LONDON, utc(2022, 3, 14, 13, 44)],
    ['03/14/2022 1:44 p.m.', LONDON, utc(2022, 3, 14, 13, 44)],
    ['03/14/2022 1:44pm', LONDON, utc(2022, 3, 14, 13, 44)],
    ['03/10/2024 1:30 am', LA, utc(2024, 3, 10, 9, 30)],
    ['03/10/2024 3:30 AM', LA, utc(2024, 3, 10, 10, 30)],
    ['03/10/2024 0:00 am', LA, utc(2024, 3, 10, 8)], // 24-hour midnight with a suffix
    ['03/10/2024 12:00 am', LA, utc(2024, 3, 10, 8)], // 12 am is midnight
    ['03/10/2024 12:30 pm', LA, utc(2024, 3, 10, 19, 30)], // 12 pm is noon, PDT
    ['03/10/2024 23:59 pm', LA, utc(2024, 3, 11, 6, 59)], // 24-hour reading with a suffix
    ['11/03/2024 1:30 am', LA, utc(2024, 11, 3, 8, 30)], // repeated hour: the earlier
    ['11/03/2024 11:00 pm', LA, utc(2024, 11, 4, 7)], // PST after the change
    ['3/31/2024 2:30 am', LONDON, utc(2024, 3, 31, 1, 30)],
    ['10/27/2024 1:59:30 am', LONDON, utc(2024, 10, 27, 0, 59, 30)],
    ['01/15/2024 9:05 pm', KOLKATA, utc(2024, 1, 15, 15, 35)],
    ['01/15/2024', KOLKATA, utc(2024, 1, 14, 18, 30)],
  ])('%s in %s', (value, zone, expected) => {
    expect(resolveTimeValue(value, at(zone))).toBe(expected);
  });
});

describe('relative forms are calendar steps on the zone wall clock', () => {
  // 2024-03-11 12:00 PDT, the day after LA springs forward.
  const laNow = utc(2024, 3, 11, 19);
  // 2024-04-01 12:00 BST, the day after London springs forward.
  const londonNow = utc(2024, 4, 1, 11);
  // 2024-11-04 12:00 PST, the day after LA falls back.
  const laAfterFallBack = utc(2024, 11, 4, 20);

  it.each([
    ['now', LA, laNow, laNow],
    ['NOW', LA, laNow, laNow],
    ['30 minutes ago', LA, laNow, laNow - 1800],
    ['1 minute ago', LA, laNow, laNow - 60],
    ['12 hours ago', LA, laNow, laNow - 12 * 3600],
    ['24 hours ago', LA, laNow, laNow - 24 * 3600], // exact: crosses the change, same as 1 day here
    ['36 hours ago', LA, laNow, utc(2024, 3, 10, 7)], // exact duration, lands in PST
    ['1 day ago', LA, laNow, utc(2024, 3, 10, 19)], // 12:00 PDT on the 10th
    ['2 days ago', LA, laNow, utc(2024, 3, 9, 20)], // 12:00 PST: 47 hours back
    ['1 week ago', LA, laNow, utc(2024, 3, 4, 20)], // 12:00 PST
    ['7 days ago', LA, laNow, utc(2024, 3, 4, 20)],
    ['4 weeks ago', LA, laNow, utc(2024, 2, 12, 20)],
    ['1 month ago', LA, laNow, utc(2024, 2, 11, 20)],
    ['3 months ago', LA, laNow, utc(2023, 12, 11, 20)],
    ['1 year ago', LA, laNow, utc(2023, 3, 11, 20)], // 2023 sprang forward on the 12th: PST
    ['2 years ago', LA, laNow, utc(2022, 3, 11, 20)], // 2022-03-11 was still PST
    ['1 day ago', LONDON, londonNow, utc(2024, 3, 31, 11)], // BST
    ['2 days ago', LONDON, londonNow, utc(2024, 3, 30, 12)], // GMT
    ['1 day ago', LA, laAfterFallBack, utc(2024, 11, 3, 20)], // 12:00 PST: 25 hours back
    ['2 days ago', LA, laAfterFallBack, utc(2024, 11, 2, 19)], // 12:00 PDT
    ['1 day ago', KOLKATA, laNow, laNow - 86400],
    ['1 month ago', KOLKATA, utc(2024, 3, 30, 18, 30), utc(2024, 2, 28, 18, 30)], // Mar 31 → Feb 29
    ['  7   DAYS ago ', LA, laNow, utc(2024, 3, 4, 20)],
    ['5 mins ago', LA, laNow, laNow - 300],
    ['2 hrs ago', LA, laNow, laNow - 7200],
  ])('%s in %s', (value, zone, now, expected) => {
    expect(resolveTimeValue(value, at(zone, now))).toBe(expected);
  });

  it('keeps the fraction of a second of now', () => {
    expect(resolveTimeValue('now', at(LA, 1710000000.5))).toBe(1710000000.5);
    expect(resolveTimeValue('1 day ago', at(KOLKATA, 1710000000.5))).toBe(1710000000.5 - 86400);
  });
});

describe('what is not a time', () => {
  it.each([
    'yesterdayy',
    '',
    '   ',
    '7 days',
    'in 7 days',
    '7 fortnights ago',
    '-5',
    '1.5 days ago',
    '02/30/2024 1:00 pm',
    '13/01/2024 1:00 pm',
    '03/10/2024 24:00 am',
    '03/10/2024 1:60 pm',
    '2024-13-01',
    '2024-02-30',
    '2024-03-10T25:00',
    '2024-03-10T10:00+25:00',
    '10/03/24',
    'now-1d',
    '99999999999999',
    'x'.repeat(100),
  ])('%j', (value) => {
    expect(parseTimeValue(value)).toBeNull();
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY, 1e20, true, null, undefined, {}, []])(
    '%j',
    (value) => {
      expect(parseTimeValue(value)).toBeNull();
    },
  );

  it('refuses relative times that reach before 1970', () => {
    expect(resolveTimeValue('100 years ago', at(LA, utc(2024, 1, 1)))).toBeNull();
  });
});

describe('compare offsets', () => {
  it.each([
    ['1 week ago', { amount: 1, unit: 'week' }],
    ['7 days', { amount: 7, unit: 'day' }],
    ['1 month ago', { amount: 1, unit: 'month' }],
    ['2 Hours', { amount: 2, unit: 'hour' }],
  ])('%s', (value, expected) => {
    expect(parseTimeOffset(value)).toEqual(expected);
  });

  it.each(['0 days', 'last week', '1 week later', '', 'week'])('refuses %j', (value) => {
    expect(parseTimeOffset(value)).toBeNull();
  });

  it('shifts on the wall clock across a DST change', () => {
    // 2024-03-11 00:00 PDT back one week is 2024-03-04 00:00 PST.
    expect(shiftBack(utc(2024, 3, 11, 7), { amount: 1, unit: 'week' }, LA)).toBe(
      utc(2024, 3, 4, 8),
    );
    // Exact hours ignore the wall clock.
    expect(shiftBack(utc(2024, 3, 11, 7), { amount: 168, unit: 'hour' }, LA)).toBe(
      utc(2024, 3, 4, 7),
    );
  });
});

describe('time zones', () => {
  it.each([LA, LONDON, KOLKATA, 'UTC', 'Etc/UTC', 'Asia/Kathmandu'])('knows %s', (zone) => {
    expect(isValidTimeZone(zone)).toBe(true);
  });
  it.each(['Mars/Base', '', ' Europe/London', 'Europe/Londonn', 'x'.repeat(80)])(
    'refuses %j',
    (zone) => {
      expect(isValidTimeZone(zone)).toBe(false);
    },
  );
});
