import { afterAll, beforeAll, expect, test } from 'vitest';
import { answer } from './sql-fixtures/answer.ts';
import { openSqlTestBed, type SqlTestBed } from './sql-fixtures/workspaces.ts';

/**
 * The lock-down must not get in the way of ordinary analytics SQL: a catalogue of DuckDB
 * features a user may write, each answered 200 with a result worked out by hand.
 */

let bed: SqlTestBed;
beforeAll(async () => {
  bed = await openSqlTestBed();
});
afterAll(() => bed.close());

const legit: Record<string, [sql: string, rows: unknown[]]> = {
  'window function with QUALIFY': [
    `SELECT JSONExtractString(json, 'user') AS u, timestamp AS t FROM all_events
     QUALIFY row_number() OVER (PARTITION BY u ORDER BY t DESC) = 1 ORDER BY u`,
    [
      { u: 'u1', t: 1709999999 },
      { u: 'u2', t: 1709338200 },
      { u: 'u3', t: 1709974800 },
    ],
  ],
  'GROUPING SETS': [
    `SELECT JSONExtractString(json, 'action_id') AS a, count(*) AS n FROM all_events
     GROUP BY GROUPING SETS ((a), ()) ORDER BY a NULLS LAST`,
    [
      { a: 'click', n: 4 },
      { a: 'purchase', n: 2 },
      { a: 'signup', n: 2 },
      { a: null, n: 8 },
    ],
  ],
  'aggregate FILTER and countIf': [
    `SELECT count(*) FILTER (WHERE JSONExtractString(json, 'action_id') = 'click') AS clicks,
            countif(JSONExtractString(json, 'action_id') = 'signup') AS signups FROM all_events`,
    [{ clicks: 4, signups: 2 }],
  ],
  'MATERIALIZED CTE, UNION BY NAME, EXCEPT': [
    `WITH s AS MATERIALIZED (SELECT 1 AS x UNION BY NAME SELECT 2 AS x)
     SELECT x FROM s EXCEPT SELECT 2 ORDER BY x`,
    [{ x: 1 }],
  ],
  'PIVOT with an IN list': [
    `SELECT * FROM (SELECT JSONExtractString(json, 'action_id') AS a FROM all_events)
     PIVOT (count(*) FOR a IN ('click', 'signup'))`,
    [{ click: 4, signup: 2 }],
  ],
  UNPIVOT: [
    `SELECT name, value FROM (SELECT 1 AS a, 2 AS b) UNPIVOT (value FOR name IN (a, b)) ORDER BY name`,
    [
      { name: 'a', value: 1 },
      { name: 'b', value: 2 },
    ],
  ],
  'LATERAL, unnest and generate_series': [
    `SELECT g, u FROM generate_series(1, 2) t(g), LATERAL (SELECT unnest(['x', 'y']) AS u) ORDER BY g, u`,
    [
      { g: 1, u: 'x' },
      { g: 1, u: 'y' },
      { g: 2, u: 'x' },
      { g: 2, u: 'y' },
    ],
  ],
  'ASOF JOIN': [
    `SELECT a.t, b.v FROM (VALUES (5)) a(t) ASOF JOIN (VALUES (1, 'one'), (4, 'four'), (9, 'nine')) b(t, v) ON a.t >= b.t`,
    [{ t: 5, v: 'four' }],
  ],
  'json_each and DuckDB JSON operators': [
    `SELECT j.key, e.json ->> '$.user' AS u FROM all_events e, json_each(e.json) j
     WHERE JSONExtractString(e.json, 'action_id') = 'purchase' AND j.key = 'paid' ORDER BY u`,
    [
      { key: 'paid', u: 'u1' },
      { key: 'paid', u: 'u2' },
    ],
  ],
  'COLUMNS, EXCLUDE and list comprehension': [
    `SELECT * EXCLUDE (json), [x * 2 FOR x IN [1, 2]] AS doubled FROM all_events ORDER BY timestamp LIMIT 1`,
    [{ timestamp: 1705305600, doubled: [2, 4] }],
  ],
  'FROM-first and ORDER BY ALL': [
    `FROM signups SELECT JSONExtractString(json, 'plan') AS plan ORDER BY ALL`,
    [{ plan: 'free' }, { plan: 'pro' }],
  ],
  'DuckDB time functions beside the macros': [
    `SELECT date_diff('day', to_timestamp(min(timestamp)), to_timestamp(max(timestamp))) AS days,
            typeof(toDateTime(1)) AS t, pg_typeof(1) AS pg FROM all_events`,
    // 2024-01-15 08:00 to 2024-03-09 15:59:59 crosses 54 day boundaries.
    [{ days: 54, t: 'TIMESTAMP WITH TIME ZONE', pg: 'integer' }],
  ],
};

for (const [name, [sql, rows]] of Object.entries(legit)) {
  test(name, async () => {
    const result = await answer(bed.workspace, {
      sql_query: sql,
      graph_type: 'Table',
      IANA_time_zone: 'UTC',
    });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect((result.body as { result: unknown[] }).result).toEqual(rows);
  });
}
