import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { tableRows } from './sql-fixtures/answer.ts';
import { NOW, openSqlTestBed, type SqlTestBed, unix } from './sql-fixtures/workspaces.ts';

/**
 * The ClickHouse-style macros against hand-worked values. Expected values follow ClickHouse's
 * implementation (FunctionsJSON.cpp): missing keys give '' or 0, JSONExtractInt truncates doubles
 * and parses numeric strings, JSONExtractBool accepts booleans and integers, JSONExtractString of
 * a non-string gives its JSON text. Times are worked out by hand from the UTC instants named.
 */

let bed: SqlTestBed;
beforeAll(async () => {
  bed = await openSqlTestBed();
});
afterAll(() => bed.close());

/** One row of constant expressions, evaluated in `zone`. */
async function row(selectList: string, zone = 'America/New_York') {
  const rows = await tableRows(bed.workspace, `SELECT ${selectList}`, { IANA_time_zone: zone });
  expect(rows).toHaveLength(1);
  return rows[0] as Record<string, unknown>;
}

const DOC = `'{"s":"x","n":1.9,"i":-3,"b":true,"f":false,"z":null,"o":{"p":[10,20,30]},"ns":"42","fs":"1.5e1","neg":"-2.7","big":18446744073709551615,"q\\"k":7}'`;

describe('JSON functions', () => {
  test('JSONExtractString: strings unquoted, other values as JSON text, missing and null empty', async () => {
    expect(
      await row(`JSONExtractString(${DOC}, 's') AS s, JSONExtractString(${DOC}, 'n') AS n,
        JSONExtractString(${DOC}, 'i') AS i, JSONExtractString(${DOC}, 'b') AS b,
        JSONExtractString(${DOC}, 'z') AS z, JSONExtractString(${DOC}, 'missing') AS missing,
        JSONExtractString(${DOC}, 'o') AS o, JSONExtractString(${DOC}, 'ns') AS ns,
        JSONExtractString(${DOC}, 'o', 'p', 2) AS second, JSONExtractString(${DOC}, 'o', 'p', -1) AS last,
        JSONExtractString(${DOC}, 'o', 'p', 9) AS beyond, JSONExtractString('not json', 's') AS invalid`),
    ).toEqual({
      s: 'x',
      n: '1.9',
      i: '-3',
      b: 'true',
      z: '',
      missing: '',
      o: '{"p":[10,20,30]}',
      ns: '42',
      second: '20',
      last: '30',
      beyond: '',
      invalid: '',
    });
  });

  test('JSONExtractFloat: numbers and numeric strings; booleans, text and missing are 0', async () => {
    expect(
      await row(`JSONExtractFloat(${DOC}, 'n') AS n, JSONExtractFloat(${DOC}, 'i') AS i,
        JSONExtractFloat(${DOC}, 'ns') AS ns, JSONExtractFloat(${DOC}, 'fs') AS fs,
        JSONExtractFloat(${DOC}, 'neg') AS neg, JSONExtractFloat(${DOC}, 's') AS s,
        JSONExtractFloat(${DOC}, 'b') AS b, JSONExtractFloat(${DOC}, 'z') AS z,
        JSONExtractFloat(${DOC}, 'missing') AS missing, JSONExtractFloat(${DOC}, 'o', 'p', 1) AS first,
        JSONExtractFloat('[', 'n') AS invalid`),
    ).toEqual({
      n: 1.9,
      i: -3,
      ns: 42,
      fs: 15,
      neg: -2.7,
      s: 0,
      b: 0,
      z: 0,
      missing: 0,
      first: 10,
      invalid: 0,
    });
  });

  test('JSONExtractInt: doubles truncated toward zero, numeric strings parsed, out of range 0', async () => {
    expect(
      await row(`JSONExtractInt(${DOC}, 'n') AS n, JSONExtractInt(${DOC}, 'i') AS i,
        JSONExtractInt(${DOC}, 'neg') AS neg, JSONExtractInt(${DOC}, 'ns') AS ns,
        JSONExtractInt(${DOC}, 'fs') AS fs, JSONExtractInt(${DOC}, 's') AS s,
        JSONExtractInt(${DOC}, 'b') AS b, JSONExtractInt(${DOC}, 'big') AS big,
        JSONExtractInt(${DOC}, 'missing') AS missing, JSONExtractInt(${DOC}, 'q"k') AS quoted_key`),
    ).toEqual({
      n: 1,
      i: -3,
      neg: -2,
      ns: 42,
      fs: 15,
      s: 0,
      b: 0,
      big: 0,
      missing: 0,
      quoted_key: 7,
    });
  });

  test('JSONExtractBool: booleans and non-zero integers; doubles, strings and missing are 0', async () => {
    expect(
      await row(`JSONExtractBool(${DOC}, 'b') AS b, JSONExtractBool(${DOC}, 'f') AS f,
        JSONExtractBool(${DOC}, 'i') AS i, JSONExtractBool(${DOC}, 'n') AS n,
        JSONExtractBool(${DOC}, 's') AS s, JSONExtractBool(${DOC}, 'ns') AS ns,
        JSONExtractBool(${DOC}, 'missing') AS missing`),
    ).toEqual({ b: 1, f: 0, i: 1, n: 0, s: 0, ns: 0, missing: 0 });
  });

  test('JSONExtractRaw and JSONHas', async () => {
    expect(
      await row(`JSONExtractRaw(${DOC}, 's') AS s, JSONExtractRaw(${DOC}, 'o') AS o,
        JSONExtractRaw(${DOC}, 'z') AS z, JSONExtractRaw(${DOC}, 'missing') AS missing,
        JSONHas(${DOC}, 's') AS has_s, JSONHas(${DOC}, 'z') AS has_null,
        JSONHas(${DOC}, 'missing') AS has_missing, JSONHas(${DOC}, 'o', 'p', 3) AS has_third,
        JSONHas(${DOC}, 'o', 'p', 4) AS has_fourth, JSONHas('nope', 's') AS invalid`),
    ).toEqual({
      s: '"x"',
      o: '{"p":[10,20,30]}',
      z: 'null',
      missing: '',
      has_s: 1,
      has_null: 1,
      has_missing: 0,
      has_third: 1,
      has_fourth: 0,
      invalid: 0,
    });
  });

  test('work on the json column of a collection and in WHERE, like ClickHouse UInt8', async () => {
    const rows = await tableRows(
      bed.workspace,
      `SELECT JSONExtractString(json, 'user') AS user, JSONExtractFloat(json, 'amount') AS amount
       FROM all_events WHERE JSONHas(json, 'paid') AND JSONExtractBool(json, 'paid') = 1`,
    );
    expect(rows).toEqual([{ user: 'u2', amount: 30 }]);
  });
});

describe('time functions', () => {
  const at = (iso: string) => unix(iso);

  test('toDateTime and toUnixTimestamp read numbers, strings in the zone, and offsets', async () => {
    expect(
      await row(`toUnixTimestamp(toDateTime(${at('2024-03-10T07:30:00Z')})) AS from_number,
        toUnixTimestamp('2024-03-10 12:00:00') AS wall_in_zone,
        toUnixTimestamp('2024-03-10 12:00:00', 'UTC') AS wall_in_utc,
        toUnixTimestamp('2024-03-10T12:00:00+02:00') AS with_offset,
        toUnixTimestamp(toDateTime('2024-03-10 01:30:00')) AS before_dst,
        toUnixTimestamp(${at('2024-03-10T07:30:00Z')}.9) AS fraction_dropped`),
    ).toEqual({
      from_number: at('2024-03-10T07:30:00Z'),
      // New York switches to EDT (UTC-4) at 2024-03-10 02:00 local.
      wall_in_zone: at('2024-03-10T16:00:00Z'),
      wall_in_utc: at('2024-03-10T12:00:00Z'),
      with_offset: at('2024-03-10T10:00:00Z'),
      before_dst: at('2024-03-10T06:30:00Z'),
      fraction_dropped: at('2024-03-10T07:30:00Z'),
    });
  });

  test('toDateTime values are labelled in the request zone', async () => {
    expect(await row(`toDateTime(${at('2024-03-10T07:30:00Z')}) AS t`)).toEqual({
      t: '2024-03-10 03:30',
    });
    expect(await row(`toDateTime(${at('2024-03-10T07:30:00Z')}) AS t`, 'Asia/Tokyo')).toEqual({
      t: '2024-03-10 16:30',
    });
  });

  test('toStartOfMinute/FiveMinutes/FifteenMinutes/Hour/Day, across DST and half-hour zones', async () => {
    expect(
      await row(`toUnixTimestamp(toStartOfMinute(${at('2024-03-10T07:50:45Z')})) AS minute,
        toUnixTimestamp(toStartOfFiveMinutes(${at('2024-03-10T07:53:10Z')})) AS five,
        toUnixTimestamp(toStartOfFifteenMinutes(${at('2024-03-10T07:53:10Z')})) AS fifteen,
        toUnixTimestamp(toStartOfHour(${at('2024-03-10T07:30:00Z')})) AS hour,
        toUnixTimestamp(toStartOfHour(${at('2024-03-10T07:50:00Z')}, 'Asia/Kolkata')) AS hour_kolkata,
        toUnixTimestamp(toStartOfDay(${at('2024-03-10T07:30:00Z')})) AS day,
        toUnixTimestamp(toStartOfDay(${at('2024-03-10T07:30:00Z')}, 'UTC')) AS day_utc,
        toUnixTimestamp(toStartOfHour(${at('2023-11-05T05:30:00Z')})) AS first_one_am,
        toUnixTimestamp(toStartOfHour(${at('2023-11-05T06:30:00Z')})) AS second_one_am`),
    ).toEqual({
      minute: at('2024-03-10T07:50:00Z'),
      five: at('2024-03-10T07:50:00Z'),
      fifteen: at('2024-03-10T07:45:00Z'),
      hour: at('2024-03-10T07:00:00Z'),
      // 13:20 IST (UTC+5:30) starts its hour at 13:00 IST = 07:30 UTC.
      hour_kolkata: at('2024-03-10T07:30:00Z'),
      // Midnight of 2024-03-10 in New York was still EST (UTC-5).
      day: at('2024-03-10T05:00:00Z'),
      day_utc: at('2024-03-10T00:00:00Z'),
      // 2023-11-05 01:30 happened twice in New York: EDT then EST; each keeps its own hour.
      first_one_am: at('2023-11-05T05:00:00Z'),
      second_one_am: at('2023-11-05T06:00:00Z'),
    });
  });

  test('toDate, toStartOfWeek (Sunday by default, Monday in odd modes), toMonday, months', async () => {
    expect(
      await row(`toDate(${at('2024-03-10T03:00:00Z')}) AS late_evening,
        toDate(${at('2024-03-10T03:00:00Z')}, 'UTC') AS utc_date,
        toStartOfWeek(${at('2024-03-13T12:00:00Z')}) AS week_sunday,
        toStartOfWeek(${at('2024-03-13T12:00:00Z')}, 1) AS week_monday,
        toStartOfWeek(${at('2024-03-10T12:00:00Z')}) AS sunday_itself,
        toMonday(${at('2024-03-10T12:00:00Z')}) AS monday_before,
        toStartOfMonth(${at('2024-03-13T12:00:00Z')}) AS month,
        toStartOfQuarter(${at('2024-05-13T12:00:00Z')}) AS quarter,
        toStartOfYear(${at('2024-05-13T12:00:00Z')}) AS year,
        toStartOfMonth('2024-02-29 23:30:00') AS from_text`),
    ).toEqual({
      late_evening: '2024-03-09',
      utc_date: '2024-03-10',
      week_sunday: '2024-03-10',
      week_monday: '2024-03-11',
      sunday_itself: '2024-03-10',
      monday_before: '2024-03-04',
      month: '2024-03-01',
      quarter: '2024-04-01',
      year: '2024-01-01',
      from_text: '2024-02-01',
    });
  });

  test("now(), today() and yesterday() use the engine's clock", async () => {
    // NOW is 2024-03-09 16:00 UTC: 11:00 in New York, already 01:00 on the 10th in Tokyo.
    expect(
      await row(`toUnixTimestamp(now()) AS now, toUnixTimestamp(now('Asia/Tokyo')) AS now_tz,
        today() AS today, yesterday() AS yesterday, today('Asia/Tokyo') AS today_tokyo`),
    ).toEqual({
      now: NOW,
      now_tz: NOW,
      today: '2024-03-09',
      yesterday: '2024-03-08',
      today_tokyo: '2024-03-10',
    });
    const later = await tableRows(
      bed.workspace,
      'SELECT toUnixTimestamp(now()) AS now',
      {},
      { now: NOW + 3600 },
    );
    expect(later).toEqual([{ now: NOW + 3600 }]);
  });

  test('macro names are case-insensitive, as DuckDB function names are', async () => {
    expect(
      await row(`TOUNIXTIMESTAMP(tostartofday(${at('2024-03-10T07:30:00Z')}, 'UTC')) AS a,
        jsonextractstring('{"a":"b"}', 'a') AS b`),
    ).toEqual({ a: at('2024-03-10T00:00:00Z'), b: 'b' });
  });
});

test('uniq and uniqExact count distinct values', async () => {
  const rows = await tableRows(
    bed.workspace,
    `SELECT uniq(JSONExtractString(json, 'user')) AS approx,
            uniqExact(JSONExtractString(json, 'user')) AS exact FROM all_events`,
  );
  // Users of all_events: u1, u2, u3.
  expect(rows).toEqual([{ approx: 3, exact: 3 }]);
});
