import { LIMITS, READ_ONLY_SQL } from '@analytics-chart/protocol';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { answer, tableRows } from './sql-fixtures/answer.ts';
import { EVENTS, NOW, openSqlTestBed, type SqlTestBed, unix } from './sql-fixtures/workspaces.ts';

/**
 * Every SQL graph shape over the fixture events. Expected values are worked out by hand in the
 * comments, or computed by a plain loop over the fixture array, never by the code under test.
 */

let bed: SqlTestBed;
beforeAll(async () => {
  bed = await openSqlTestBed();
});
afterAll(() => bed.close());

const allEvents = EVENTS.filter((e) => e.collection === 'all_events');

async function ok(body: Record<string, unknown>, options = {}) {
  const { status, body: envelope } = await answer(bed.workspace, body, options);
  expect(status, JSON.stringify(envelope)).toBe(200);
  return envelope as { result: Record<string, unknown>[]; metadata: Record<string, unknown> };
}

describe('a count per action_id over the last 30 days', () => {
  const sql = `SELECT JSONExtractString(json,'action_id') AS action_id, count(*) AS c FROM base WHERE timestamp > toUnixTimestamp(now()) - 86400*30 GROUP BY action_id ORDER BY c DESC`;

  test('returns the right rows for the hosted service SQL', async () => {
    const envelope = await ok({
      sql_query: sql,
      graph_type: 'Bar Chart',
      label_column: 'action_id',
      value_column: 'c',
    });
    // A plain loop: events of all_events newer than 30 days before NOW, counted by action_id.
    const counts = new Map<string, number>();
    for (const event of allEvents) {
      if (unix(event.at) > NOW - 86400 * 30) {
        const id = String(event.json.action_id ?? '');
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
    }
    const expected = [...counts].map(([action_id, c]) => ({ action_id, c }));
    expect(expected).toHaveLength(3); // click 3, signup 2, purchase 2: the January click is out
    const byLabel = (a: Record<string, unknown>, b: Record<string, unknown>) =>
      String(a.action_id).localeCompare(String(b.action_id));
    expect([...envelope.result].sort(byLabel)).toEqual(expected.sort(byLabel));
    expect(envelope.result[0]).toEqual({ action_id: 'click', c: 3 });
    expect(envelope.metadata).toEqual({ truncated: false });
  });

  test('the same SQL as a Table keeps the rows as the query returns them', async () => {
    const rows = await tableRows(bed.workspace, sql);
    expect(rows[0]).toEqual({ action_id: 'click', c: 3 });
    expect(rows.map((r) => r.c)).toEqual([3, 2, 2]);
  });
});

describe('Single Line', () => {
  test('daily buckets from toStartOfDay, labelled in the request zone', async () => {
    const body = {
      sql_query: `SELECT toStartOfDay(timestamp) AS day, count(*) AS n FROM all_events GROUP BY 1`,
      graph_type: 'Single Line',
      timestamp_column: 'day',
      value_column: 'n',
    };
    // Los Angeles is UTC-8 before 2024-03-10: 03-01 10:15Z, 10:45Z, 23:30Z and 03-02 00:10Z all
    // fall on 03-01 there; 03-09 09:00Z and 15:59:59Z on 03-09.
    const la = await ok({ ...body, IANA_time_zone: 'America/Los_Angeles' });
    expect(la.result).toEqual([
      { timestamp: '2024-01-15', n: 1 },
      { timestamp: '2024-03-01', n: 4 },
      { timestamp: '2024-03-05', n: 1 },
      { timestamp: '2024-03-09', n: 2 },
    ]);
    expect(la.metadata).toEqual({ truncated: false, granularity: 'Day' });
    const utc = await ok({ ...body, IANA_time_zone: 'UTC' });
    expect(utc.result).toEqual([
      { timestamp: '2024-01-15', n: 1 },
      { timestamp: '2024-03-01', n: 3 },
      { timestamp: '2024-03-02', n: 1 },
      { timestamp: '2024-03-05', n: 1 },
      { timestamp: '2024-03-09', n: 2 },
    ]);
  });

  test('a BIGINT column of Unix seconds is a time axis; rows come out in time order', async () => {
    const envelope = await ok({
      sql_query: `SELECT timestamp - timestamp % 3600 AS hour, count(*) AS n FROM all_events
                  WHERE timestamp >= ${unix('2024-03-01T00:00:00Z')} GROUP BY 1 ORDER BY 1 DESC`,
      graph_type: 'Single Line',
      timestamp_column: 'hour',
      value_column: 'n',
      IANA_time_zone: 'UTC',
    });
    expect(envelope.result).toEqual([
      { timestamp: '2024-03-01 10:00', n: 2 },
      { timestamp: '2024-03-01 23:00', n: 1 },
      { timestamp: '2024-03-02 00:00', n: 1 },
      { timestamp: '2024-03-05 12:00', n: 1 },
      { timestamp: '2024-03-09 09:00', n: 1 },
      { timestamp: '2024-03-09 15:00', n: 1 },
    ]);
    expect(envelope.metadata.granularity).toBe('Hour');
  });

  test('months and weeks get their collection-mode labels', async () => {
    const months = await ok({
      sql_query: `SELECT toStartOfMonth(timestamp) AS m, count(*) AS n FROM all_events GROUP BY 1`,
      graph_type: 'Single Line',
      timestamp_column: 'm',
      value_column: 'n',
    });
    expect(months.result).toEqual([
      { timestamp: '2024-01', n: 1 },
      { timestamp: '2024-03', n: 7 },
    ]);
    expect(months.metadata.granularity).toBe('Month');
    const weeks = await ok({
      sql_query: `SELECT toMonday(timestamp) AS w, count(*) AS n FROM all_events GROUP BY 1`,
      graph_type: 'Single Line',
      timestamp_column: 'w',
      value_column: 'n',
    });
    // In Los Angeles: 01-15 (a Monday); 03-01 x4 (Friday, week of 02-26); 03-05 and 03-09 x2.
    expect(weeks.result).toEqual([
      { timestamp: '2024-01-15', n: 1 },
      { timestamp: '2024-02-26', n: 4 },
      { timestamp: '2024-03-04', n: 3 },
    ]);
    expect(weeks.metadata.granularity).toBe('Week');
  });

  test('rows of the same time are summed; rows without a time are left out', async () => {
    const envelope = await ok({
      sql_query: `SELECT * FROM (VALUES (DATE '2024-03-01', 2), (DATE '2024-03-01', 3),
                  (NULL, 7), (DATE '2024-03-02', NULL)) t(d, v)`,
      graph_type: 'Single Line',
      timestamp_column: 'd',
      value_column: 'v',
    });
    expect(envelope.result).toEqual([
      { timestamp: '2024-03-01', v: 5 },
      { timestamp: '2024-03-02', v: null },
    ]);
  });

  test('a text time column is used as the label', async () => {
    const envelope = await ok({
      sql_query: `SELECT strftime(to_timestamp(timestamp), '%Y/%m') AS ym, count(*) AS n
                  FROM all_events GROUP BY 1`,
      graph_type: 'Single Line',
      timestamp_column: 'ym',
      value_column: 'n',
    });
    expect(envelope.result).toEqual([
      { timestamp: '2024/01', n: 1 },
      { timestamp: '2024/03', n: 7 },
    ]);
    expect(envelope.metadata).toEqual({ truncated: false });
  });
});

describe('Multi Line and Stacked Line', () => {
  for (const graph of ['Multi Line', 'Stacked Line']) {
    test(`${graph}: wide rows per day, series by combined value`, async () => {
      const envelope = await ok({
        sql_query: `SELECT toDate(timestamp) AS day, JSONExtractString(json, 'action_id') AS action,
                    sum(JSONExtractFloat(json, 'amount')) AS amount FROM all_events GROUP BY ALL`,
        graph_type: graph,
        timestamp_column: 'day',
        value_column: 'amount',
        split_column: 'action',
        IANA_time_zone: 'UTC',
      });
      // Per UTC day: 01-15 click 0; 03-01 signup 10, click 2.5 + "4" = 6.5; 03-02 purchase 30;
      // 03-05 click 0 (no amount); 03-09 signup 1, purchase 12.5. Totals: purchase 42.5,
      // signup 11, click 6.5.
      expect(envelope.metadata.series).toEqual(['purchase', 'signup', 'click']);
      expect(envelope.result).toEqual([
        { timestamp: '2024-01-15', purchase: null, signup: null, click: 0 },
        { timestamp: '2024-03-01', purchase: null, signup: 10, click: 6.5 },
        { timestamp: '2024-03-02', purchase: 30, signup: null, click: null },
        { timestamp: '2024-03-05', purchase: null, signup: null, click: 0 },
        { timestamp: '2024-03-09', purchase: 12.5, signup: 1, click: null },
      ]);
      expect(envelope.metadata.granularity).toBe('Day');
    });
  }

  test('keeps the top 10 series and leaves out rows without a split value', async () => {
    const envelope = await ok({
      sql_query: `SELECT DATE '2024-03-01' AS d, CASE WHEN i = 12 THEN NULL ELSE 's' || i END AS s,
                  i AS v FROM range(13) r(i)`,
      graph_type: 'Multi Line',
      timestamp_column: 'd',
      value_column: 'v',
      split_column: 's',
    });
    const expected = ['s11', 's10', 's9', 's8', 's7', 's6', 's5', 's4', 's3', 's2'];
    expect(expected).toHaveLength(LIMITS.series);
    expect(envelope.metadata.series).toEqual(expected);
    expect(envelope.result).toEqual([
      {
        timestamp: '2024-03-01',
        ...Object.fromEntries(expected.map((s) => [s, Number(s.slice(1))])),
      },
    ]);
  });

  test('breaks ties by name as the databases order text', async () => {
    const envelope = await ok({
      sql_query: `SELECT DATE '2024-03-01' AS d, s, 1 AS v FROM (VALUES ('\u{1f600}'), ('\uff21'), ('z')) t(s)`,
      graph_type: 'Multi Line',
      timestamp_column: 'd',
      value_column: 'v',
      split_column: 's',
    });
    // UTF-8 bytes: 'z' 7A, U+FF21 EF BC A1, U+1F600 F0 9F 98 80 (UTF-16 puts the emoji first).
    expect(envelope.metadata.series).toEqual(['z', '\uff21', '\u{1f600}']);
  });
});

describe('label and value shapes', () => {
  test('Bar Chart and Pie Chart rows keep the query order', async () => {
    for (const graph of ['Bar Chart', 'Pie Chart']) {
      const envelope = await ok({
        sql_query: `SELECT JSONExtractString(json, 'user') AS user, count(*) AS events
                    FROM all_events GROUP BY 1 ORDER BY user`,
        graph_type: graph,
        label_column: 'user',
        value_column: 'events',
      });
      const counts = new Map<string, number>();
      for (const e of allEvents)
        counts.set(String(e.json.user), (counts.get(String(e.json.user)) ?? 0) + 1);
      expect(envelope.result).toEqual(
        [...counts.keys()].sort().map((user) => ({ user, events: counts.get(user) })),
      );
    }
  });

  test('time labels and number labels become text', async () => {
    const envelope = await ok({
      sql_query: `SELECT toStartOfMonth(timestamp) AS month, 7 AS k, count(*) AS n
                  FROM all_events GROUP BY 1 ORDER BY 1`,
      graph_type: 'Pie Chart',
      label_column: 'month',
      value_column: 'n',
    });
    expect(envelope.result).toEqual([
      { month: '2024-01', n: 1 },
      { month: '2024-03', n: 7 },
    ]);
  });

  test('Funnel steps in query order with step-to-step and overall conversion', async () => {
    const sql = `WITH e AS (SELECT JSONExtractString(json, 'user') AS u,
                   JSONExtractString(json, 'action_id') AS a, JSONExtractBool(json, 'paid') AS paid
                   FROM all_events)
      SELECT step, users FROM (
        SELECT 1 AS o, 'visited' AS step, count(DISTINCT u) AS users FROM e
        UNION ALL SELECT 2, 'clicked', count(DISTINCT u) FROM e WHERE a = 'click'
        UNION ALL SELECT 3, 'purchased', count(DISTINCT u) FROM e WHERE a = 'purchase'
        UNION ALL SELECT 4, 'paid', count(DISTINCT u) FROM e WHERE a = 'purchase' AND paid = 1
      ) ORDER BY o`;
    const envelope = await ok({
      sql_query: sql,
      graph_type: 'Funnel',
      label_column: 'step',
      value_column: 'users',
    });
    // A plain loop over the fixture: distinct users per step.
    const users = (keep: (j: Record<string, unknown>) => boolean) =>
      new Set(allEvents.filter((e) => keep(e.json)).map((e) => e.json.user)).size;
    const steps = [
      users(() => true),
      users((j) => j.action_id === 'click'),
      users((j) => j.action_id === 'purchase'),
      users((j) => j.action_id === 'purchase' && j.paid === true),
    ];
    expect(steps).toEqual([3, 3, 2, 1]);
    expect(envelope.result).toEqual([
      { step: 'visited', users: 3 },
      { step: 'clicked', users: 3 },
      { step: 'purchased', users: 2 },
      { step: 'paid', users: 1 },
    ]);
    expect(envelope.metadata.conversion).toEqual([1, 1, 2 / 3, 1 / 2]);
    expect(envelope.metadata.overall_conversion).toEqual([1, 1, 2 / 3, 1 / 3]);
  });

  test('Funnel conversion after an empty step is null', async () => {
    const envelope = await ok({
      sql_query: `SELECT * FROM (VALUES ('a', 4), ('b', 0), ('c', 0)) t(step, n)`,
      graph_type: 'Funnel',
      label_column: 'step',
      value_column: 'n',
    });
    expect(envelope.metadata.conversion).toEqual([1, 0, null]);
    expect(envelope.metadata.overall_conversion).toEqual([1, 0, 0]);
  });

  test('Single Value answers the first row', async () => {
    const envelope = await ok({
      sql_query: `SELECT 'events' AS label, count(*) AS total FROM all_events
                  UNION ALL SELECT 'other', 1 ORDER BY total DESC`,
      graph_type: 'Single Value',
      label_column: 'label',
      value_column: 'total',
    });
    expect(envelope.result).toEqual([{ label: 'events', total: allEvents.length }]);
  });
});

describe('Table', () => {
  test('rows as returned, time columns as labels, the column order in metadata', async () => {
    const envelope = await ok({
      sql_query: `SELECT timestamp, toDateTime(timestamp) AS at, JSONExtractString(json, 'action_id') AS action
                  FROM all_events ORDER BY timestamp LIMIT 3`,
      graph_type: 'Table',
      IANA_time_zone: 'UTC',
    });
    // The earliest three: 01-15 08:00, 03-01 10:15, 03-01 10:45 (minutes, no seconds).
    expect(envelope.result).toEqual([
      { timestamp: unix('2024-01-15T08:00:00Z'), at: '2024-01-15 08:00', action: 'click' },
      { timestamp: unix('2024-03-01T10:15:00Z'), at: '2024-03-01 10:15', action: 'signup' },
      { timestamp: unix('2024-03-01T10:45:00Z'), at: '2024-03-01 10:45', action: 'click' },
    ]);
    expect(envelope.metadata).toEqual({ truncated: false, columns: ['timestamp', 'at', 'action'] });
  });

  test('values become JSON-safe', async () => {
    const rows = await tableRows(
      bed.workspace,
      `SELECT 9007199254740993::BIGINT AS big, 42::HUGEINT AS huge, 12.50::DECIMAL(5,2) AS dec,
        'nan'::DOUBLE AS nan, 'inf'::DOUBLE AS inf, [1, 2] AS list, {'a': 1, 'b': [true]} AS st,
        MAP {'k': 2} AS m, DATE '2024-03-05' AS d, TIMESTAMP '2024-03-05 10:11:12' AS naive,
        true AS b, NULL AS n, '{"x":1}'::JSON AS j, 'text' AS s, 1 AS "2024"`,
    );
    expect(rows).toEqual([
      {
        big: '9007199254740993',
        huge: 42,
        dec: 12.5,
        nan: null,
        inf: null,
        list: [1, 2],
        st: { a: 1, b: [true] },
        m: { k: 2 },
        d: '2024-03-05',
        naive: '2024-03-05 10:11:12',
        b: true,
        n: null,
        j: { x: 1 },
        s: 'text',
        2024: 1,
      },
    ]);
  });

  test('duplicate column names are made unique', async () => {
    const envelope = await ok({ sql_query: 'SELECT 1 AS a, 2 AS a', graph_type: 'Table' });
    expect(envelope.metadata.columns).toEqual(['a', 'a:1']);
    expect(envelope.result).toEqual([{ a: 1, 'a:1': 2 }]);
  });
});

describe('row cap', () => {
  test('2,000 rows at most, with metadata.truncated', async () => {
    const over = await ok({ sql_query: 'SELECT * FROM range(5000)', graph_type: 'Table' });
    expect(over.result).toHaveLength(LIMITS.sqlRows);
    expect(over.result[LIMITS.sqlRows - 1]).toEqual({ range: LIMITS.sqlRows - 1 });
    expect(over.metadata.truncated).toBe(true);
    const exact = await ok({ sql_query: 'SELECT * FROM range(2000)', graph_type: 'Table' });
    expect(exact.result).toHaveLength(2000);
    expect(exact.metadata.truncated).toBe(false);
  });

  test('a result of a billion rows is cut, not materialized', async () => {
    const envelope = await ok(
      { sql_query: 'SELECT i, i * 2 AS twice FROM range(1000000000) t(i)', graph_type: 'Table' },
      { timeoutMs: 5000 },
    );
    expect(envelope.result).toHaveLength(LIMITS.sqlRows);
    expect(envelope.metadata.truncated).toBe(true);
  });

  test('the cap applies to chart shapes too', async () => {
    const envelope = await ok({
      sql_query: `SELECT i AS t, 1 AS v FROM range(3000) r(i)`,
      graph_type: 'Single Line',
      timestamp_column: 't',
      value_column: 'v',
    });
    expect(envelope.result).toHaveLength(LIMITS.sqlRows);
    expect(envelope.metadata.truncated).toBe(true);
  });
});

describe('collections as tables', () => {
  test('every collection is a table; base is all_events unless told otherwise', async () => {
    const count = async (sql: string, options = {}) =>
      (await tableRows(bed.workspace, sql, {}, options))[0]?.n;
    expect(await count('SELECT count(*) AS n FROM all_events')).toBe(allEvents.length);
    expect(await count('SELECT count(*) AS n FROM base')).toBe(allEvents.length);
    expect(await count('SELECT count(*) AS n FROM signups')).toBe(2);
    expect(await count('SELECT count(*) AS n FROM base', { baseCollection: 'signups' })).toBe(2);
    expect(await count('SELECT count(*) AS n FROM "Mixed Case"')).toBe(1);
    expect(await count('SELECT count(*) AS n FROM "mixed case"')).toBe(1);
    expect(await count('SELECT count(*) AS n FROM ALL_EVENTS')).toBe(allEvents.length);
    expect(await count('SELECT count(*) AS n FROM "odd ""quoted"" name"')).toBe(1);
  });

  test('a collection with no events is an empty table with the same columns', async () => {
    const envelope = await ok({ sql_query: 'SELECT * FROM never_logged', graph_type: 'Table' });
    expect(envelope.result).toEqual([]);
    expect(envelope.metadata.columns).toEqual(['timestamp', 'json']);
  });

  test('CTEs, joins and subqueries across collections work', async () => {
    const rows = await tableRows(
      bed.workspace,
      `WITH s AS (SELECT JSONExtractString(json, 'user') AS u FROM signups)
       SELECT (SELECT count(*) FROM s) AS signups, count(*) AS joined
       FROM all_events a JOIN signups b ON a.timestamp < b.timestamp`,
    );
    // all_events before 03-03 12:00 (4 March-1/2 events + January) pair with the 03-03 signup;
    // those before 03-04 12:00 (the same 5) with the 03-04 one: 10 pairs.
    expect(rows).toEqual([{ signups: 2, joined: 10 }]);
  });
});

describe('mapping errors', () => {
  test('a mapped column absent from the result is a 400 naming it', async () => {
    const { status, body } = await answer(bed.workspace, {
      sql_query: 'SELECT 1 AS a, 2 AS b',
      graph_type: 'Bar Chart',
      label_column: 'a',
      value_column: 'count',
    });
    expect(status).toBe(400);
    expect(body).toEqual({
      error: "value_column 'count' is not a column of the query's result (its columns: a, b)",
    });
    const line = await answer(bed.workspace, {
      sql_query: 'SELECT 1 AS a, 2 AS b',
      graph_type: 'Multi Line',
      timestamp_column: 'a',
      value_column: 'b',
      split_column: 'who',
    });
    expect(line).toEqual({
      status: 400,
      body: {
        error: "split_column 'who' is not a column of the query's result (its columns: a, b)",
      },
    });
  });

  test('a missing mapping is refused by the protocol before any SQL runs', async () => {
    await expect(
      answer(bed.workspace, { sql_query: 'SELECT 1', graph_type: 'Funnel', label_column: 'a' }),
    ).rejects.toThrow('value_column');
  });

  test('a value column that holds no numbers is a 400', async () => {
    const text = await answer(bed.workspace, {
      sql_query: `SELECT 'a' AS l, 'many' AS v`,
      graph_type: 'Pie Chart',
      label_column: 'l',
      value_column: 'v',
    });
    expect(text).toEqual({
      status: 400,
      body: { error: "value_column 'v' must hold numbers, but the query returns text there" },
    });
    const list = await answer(bed.workspace, {
      sql_query: `SELECT 'a' AS l, [1] AS v`,
      graph_type: 'Bar Chart',
      label_column: 'l',
      value_column: 'v',
    });
    expect(list.status).toBe(400);
    expect(list.body).toEqual({
      error: "value_column 'v' must hold numbers, but the query returns INTEGER[] there",
    });
  });

  test('numbers as text are accepted as values', async () => {
    const envelope = await ok({
      sql_query: `SELECT JSONExtractString(json, 'action_id') AS a, max(JSONExtractString(json, 'amount')) AS v
                  FROM all_events WHERE JSONHas(json, 'amount') GROUP BY 1 ORDER BY 1`,
      graph_type: 'Bar Chart',
      label_column: 'a',
      value_column: 'v',
    });
    // Text maxima: click max('2.5','4') = '4'; purchase max('30','12.5') = '30'; signup max('10','1') = '10'.
    expect(envelope.result).toEqual([
      { a: 'click', v: 4 },
      { a: 'purchase', v: 30 },
      { a: 'signup', v: 10 },
    ]);
  });

  test('DuckDB errors come back as one sentence without the SQL excerpt', async () => {
    const unknownColumn = await answer(bed.workspace, {
      sql_query: 'SELECT nope FROM all_events',
      graph_type: 'Table',
    });
    expect(unknownColumn).toEqual({
      status: 400,
      body: { error: 'Binder Error: Referenced column "nope" not found in FROM clause!' },
    });
    const syntax = await answer(bed.workspace, { sql_query: 'SELEC 1', graph_type: 'Table' });
    expect(syntax).toEqual({
      status: 400,
      body: { error: 'SQL syntax error: syntax error at or near "SELEC"' },
    });
    const unknownFunction = await answer(bed.workspace, {
      sql_query: 'SELECT JSONExtractUUID(json) FROM all_events',
      graph_type: 'Table',
    });
    expect(unknownFunction.status).toBe(400);
    expect(JSON.stringify(unknownFunction.body)).not.toMatch(/LINE|Did you mean|\^/);
  });

  test('the read-only answer is exact', async () => {
    expect(
      await answer(bed.workspace, { sql_query: 'DELETE FROM all_events', graph_type: 'Table' }),
    ).toEqual({
      status: 400,
      body: { error: READ_ONLY_SQL },
    });
  });
});
