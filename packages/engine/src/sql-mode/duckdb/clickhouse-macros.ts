/**
 * ClickHouse-style functions that the hosted service's users write in SQL mode, as DuckDB
 * temporary macros created on the query's own connection. The text below is fixed: the request's
 * zone and "now" reach the macros through session variables set with bound parameters
 * (`SET VARIABLE ch_tz = $1`), never as SQL text.
 *
 * Semantics follow ClickHouse's own implementation (`FunctionsJSON.cpp`): a missing key gives the
 * type's default (`''`, `0`), never NULL; see `SQL.md` for the table of what each one returns.
 */

/** Session variable holding the request's IANA zone, read by the time macros. */
export const ZONE_VARIABLE = 'ch_tz';
/** Session variable holding the engine's "now" in Unix seconds, read by `now()` and `today()`. */
export const NOW_VARIABLE = 'ch_now';

/** Keys a JSONExtract call may take after the document; ClickHouse allows any number. */
export const MAX_JSON_KEYS = 6;

const ZONE = `getvariable('${ZONE_VARIABLE}')`;

/** Integer type names as `typeof()` spells them: integer arguments are 1-based array indices. */
const INTEGER_TYPES = [
  'TINYINT',
  'SMALLINT',
  'INTEGER',
  'BIGINT',
  'HUGEINT',
  'UTINYINT',
  'USMALLINT',
  'UINTEGER',
  'UBIGINT',
  'UHUGEINT',
]
  .map((t) => `'${t}'`)
  .join(', ');

/**
 * One step of a JSON path: a string key becomes `."key"` with `\` and `"` escaped, a positive
 * integer n the array element `[n-1]`, a negative one `[#n]` (counted from the end), as in
 * ClickHouse's `indices_or_keys`.
 */
const KEY_STEP = `CASE WHEN typeof(k) IN (${INTEGER_TYPES})
  THEN CASE WHEN TRY_CAST(k AS BIGINT) > 0
    THEN '[' || CAST(TRY_CAST(k AS BIGINT) - 1 AS VARCHAR) || ']'
    ELSE '[#' || CAST(TRY_CAST(k AS BIGINT) AS VARCHAR) || ']' END
  ELSE '."' || replace(replace(CAST(k AS VARCHAR), '\\', '\\\\'), '"', '\\"') || '"' END`;

/**
 * Each JSON function as a body over `j` (the document) and `p` (a DuckDB JSON path). Invalid
 * JSON gives the default, as in ClickHouse, instead of DuckDB's "Malformed JSON" error.
 */
const JSON_BODIES: Record<string, string> = {
  // A string value unquoted; null or missing ''; any other value its JSON text (current ClickHouse).
  jsonextractstring: `CASE WHEN json_valid(j) THEN COALESCE(json_extract_string(j, p), '') ELSE '' END`,
  // Numbers as Float64; a string holding a whole number is parsed; anything else 0.
  jsonextractfloat: `CASE WHEN json_valid(j) AND json_type(j, p) IN ('BIGINT', 'UBIGINT', 'DOUBLE', 'VARCHAR')
    THEN COALESCE(TRY_CAST(json_extract_string(j, p) AS DOUBLE), 0) ELSE 0 END`,
  // Integers as Int64; doubles truncated toward zero; strings parsed as an integer or a float;
  // out of range or anything else 0.
  jsonextractint: `CASE WHEN NOT COALESCE(json_valid(j), false) THEN 0
    WHEN json_type(j, p) IN ('BIGINT', 'UBIGINT') THEN COALESCE(TRY_CAST(json_extract_string(j, p) AS BIGINT), 0)
    WHEN json_type(j, p) IN ('DOUBLE', 'VARCHAR') THEN COALESCE(CASE
      WHEN regexp_full_match(json_extract_string(j, p), '[+-]?[0-9]+') THEN TRY_CAST(json_extract_string(j, p) AS BIGINT)
      ELSE TRY_CAST(trunc(TRY_CAST(json_extract_string(j, p) AS DOUBLE)) AS BIGINT) END, 0)
    ELSE 0 END`,
  // true/false as 1/0 (UInt8); an integer is 1 when non-zero; anything else 0.
  jsonextractbool: `CAST(CASE WHEN NOT COALESCE(json_valid(j), false) THEN 0
    WHEN json_type(j, p) = 'BOOLEAN' THEN CASE WHEN json_extract_string(j, p) = 'true' THEN 1 ELSE 0 END
    WHEN json_type(j, p) IN ('BIGINT', 'UBIGINT') THEN CASE WHEN json_extract_string(j, p) <> '0' THEN 1 ELSE 0 END
    ELSE 0 END AS UTINYINT)`,
  // The value's JSON text (minified by DuckDB); missing ''.
  jsonextractraw: `CASE WHEN json_valid(j) THEN COALESCE(CAST(json_extract(j, p) AS VARCHAR), '') ELSE '' END`,
  // 1 when the path exists (even holding null), else 0.
  jsonhas: `CAST(CASE WHEN json_valid(j) AND json_exists(j, p) THEN 1 ELSE 0 END AS UTINYINT)`,
};

/** Public names as ClickHouse spells them (DuckDB resolves function names ignoring case). */
const JSON_NAMES: Record<string, string> = {
  jsonextractstring: 'JSONExtractString',
  jsonextractfloat: 'JSONExtractFloat',
  jsonextractint: 'JSONExtractInt',
  jsonextractbool: 'JSONExtractBool',
  jsonextractraw: 'JSONExtractRaw',
  jsonhas: 'JSONHas',
};

/** One macro: its statement and the helper macros its body calls. */
interface MacroDefinition {
  sql: string;
  uses: string[];
}

function jsonMacros(): Record<string, MacroDefinition> {
  const macros: Record<string, MacroDefinition> = {
    _ch_key_step: {
      sql: `CREATE OR REPLACE TEMP MACRO _ch_key_step(k) AS (${KEY_STEP})`,
      uses: [],
    },
  };
  for (const [key, body] of Object.entries(JSON_BODIES)) {
    const internal = `_ch_${key}`;
    macros[internal] = {
      sql: `CREATE OR REPLACE TEMP MACRO ${internal}(j, p) AS (${body})`,
      uses: [],
    };
    const overloads: string[] = [];
    for (let n = 0; n <= MAX_JSON_KEYS; n++) {
      const keys = Array.from({ length: n }, (_, i) => `k${i + 1}`);
      const path = ["'$'", ...keys.map((k) => `_ch_key_step(${k})`)].join(' || ');
      overloads.push(`(${['j', ...keys].join(', ')}) AS ${internal}(j, ${path})`);
    }
    macros[key] = {
      sql: `CREATE OR REPLACE TEMP MACRO ${JSON_NAMES[key]} ${overloads.join(',\n  ')}`,
      uses: [internal, '_ch_key_step'],
    };
  }
  return macros;
}
/**
 * Any time-like value as an instant (TIMESTAMPTZ), the ClickHouse DateTime of this engine:
 * numbers are Unix seconds (fractions dropped, as DateTime has whole seconds); TIMESTAMPTZ stays;
 * strings, dates and zone-less timestamps are wall-clock readings in `tz` unless they carry an
 * offset. `typeof()` is constant per call, so DuckDB folds the branches away.
 */
const TO_INSTANT = `CASE
  WHEN typeof(x) = 'TIMESTAMP WITH TIME ZONE' THEN TRY_CAST(x AS TIMESTAMPTZ)
  WHEN typeof(x) NOT IN ('VARCHAR', 'DATE') AND typeof(x) NOT LIKE 'TIMESTAMP%' AND TRY_CAST(x AS DOUBLE) IS NOT NULL
    THEN to_timestamp(trunc(TRY_CAST(x AS DOUBLE)))
  ELSE _ch_parse_instant(CAST(x AS VARCHAR), tz) END`;

const PARSE_INSTANT = `CASE
  WHEN regexp_full_match(s, '\\s*-?[0-9]+(\\.[0-9]*)?\\s*') THEN to_timestamp(trunc(TRY_CAST(s AS DOUBLE)))
  WHEN regexp_matches(s, '[0-9]:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?\\s*(Z|z|[+-][0-9]{2}(:?[0-9]{2})?)\\s*$') THEN TRY_CAST(s AS TIMESTAMPTZ)
  ELSE timezone(tz, TRY_CAST(s AS TIMESTAMP)) END`;

/** `t` truncated to `unit` seconds of its wall clock in `tz`, exact across DST and odd offsets. */
const WALL_FLOOR = `to_timestamp(floor(epoch(t)) - (
  floor(epoch(timezone(tz, t))) - unit * floor(floor(epoch(timezone(tz, t))) / unit)))`;

/** A macro with an optional trailing zone: the shorter overload uses the request's zone. */
function withZone(name: string, params: string[], body: string): string {
  const call = (zone: string) => body.replaceAll('{tz}', zone);
  return `CREATE OR REPLACE TEMP MACRO ${name} (${params.join(', ')}) AS (${call(ZONE)}),
  (${[...params, 'tz'].join(', ')}) AS (${call('tz')})`;
}

function timeMacros(): Record<string, MacroDefinition> {
  const instant = '_ch_instant(x, {tz})';
  const onInstant = ['_ch_instant'];
  const floor = (unit: number) => `_ch_wall_floor(${instant}, ${unit}, {tz})`;
  const nowSeconds = `getvariable('${NOW_VARIABLE}')`;
  const truncDate = (part: string) => `CAST(date_trunc('${part}', _ch_date(x, {tz})) AS DATE)`;
  return {
    _ch_parse_instant: {
      sql: `CREATE OR REPLACE TEMP MACRO _ch_parse_instant(s, tz) AS (${PARSE_INSTANT})`,
      uses: [],
    },
    _ch_instant: {
      sql: `CREATE OR REPLACE TEMP MACRO _ch_instant(x, tz) AS (${TO_INSTANT})`,
      uses: ['_ch_parse_instant'],
    },
    _ch_wall_floor: {
      sql: `CREATE OR REPLACE TEMP MACRO _ch_wall_floor(t, unit, tz) AS (${WALL_FLOOR})`,
      uses: [],
    },
    _ch_date: {
      sql: `CREATE OR REPLACE TEMP MACRO _ch_date(x, tz) AS (CAST(timezone(tz, _ch_instant(x, tz)) AS DATE))`,
      uses: onInstant,
    },
    // ClickHouse week modes: an odd mode starts weeks on Monday, an even one (default 0) on Sunday.
    _ch_week: {
      sql: `CREATE OR REPLACE TEMP MACRO _ch_week(d, mode) AS (
        d - CAST(CASE WHEN mode % 2 = 1 THEN isodow(d) - 1 ELSE isodow(d) % 7 END AS INTEGER))`,
      uses: [],
    },
    todatetime: { sql: withZone('toDateTime', ['x'], instant), uses: onInstant },
    tounixtimestamp: {
      sql: withZone('toUnixTimestamp', ['x'], `CAST(floor(epoch(${instant})) AS BIGINT)`),
      uses: onInstant,
    },
    todate: { sql: withZone('toDate', ['x'], '_ch_date(x, {tz})'), uses: ['_ch_date'] },
    tostartofminute: {
      sql: withZone('toStartOfMinute', ['x'], floor(60)),
      uses: [...onInstant, '_ch_wall_floor'],
    },
    tostartoffiveminutes: {
      sql: withZone('toStartOfFiveMinutes', ['x'], floor(300)),
      uses: [...onInstant, '_ch_wall_floor'],
    },
    tostartoffifteenminutes: {
      sql: withZone('toStartOfFifteenMinutes', ['x'], floor(900)),
      uses: [...onInstant, '_ch_wall_floor'],
    },
    tostartofhour: {
      sql: withZone('toStartOfHour', ['x'], floor(3600)),
      uses: [...onInstant, '_ch_wall_floor'],
    },
    tostartofday: {
      sql: withZone('toStartOfDay', ['x'], 'timezone({tz}, CAST(_ch_date(x, {tz}) AS TIMESTAMP))'),
      uses: ['_ch_date'],
    },
    tostartofweek: {
      sql: `CREATE OR REPLACE TEMP MACRO toStartOfWeek (x) AS (_ch_week(_ch_date(x, ${ZONE}), 0)),
        (x, mode) AS (_ch_week(_ch_date(x, ${ZONE}), mode)),
        (x, mode, tz) AS (_ch_week(_ch_date(x, tz), mode))`,
      uses: ['_ch_date', '_ch_week'],
    },
    tomonday: {
      sql: withZone('toMonday', ['x'], '_ch_week(_ch_date(x, {tz}), 1)'),
      uses: ['_ch_date', '_ch_week'],
    },
    tostartofmonth: {
      sql: withZone('toStartOfMonth', ['x'], truncDate('month')),
      uses: ['_ch_date'],
    },
    tostartofquarter: {
      sql: withZone('toStartOfQuarter', ['x'], truncDate('quarter')),
      uses: ['_ch_date'],
    },
    tostartofyear: { sql: withZone('toStartOfYear', ['x'], truncDate('year')), uses: ['_ch_date'] },
    // now() is the engine's clock (deterministic in tests); a zone argument changes nothing about
    // the instant, and labels are made in the request's zone anyway.
    now: {
      sql: `CREATE OR REPLACE TEMP MACRO now () AS (to_timestamp(${nowSeconds})),
        (tz) AS (to_timestamp(${nowSeconds}))`,
      uses: [],
    },
    today: {
      sql: withZone('today', [], `CAST(timezone({tz}, to_timestamp(${nowSeconds})) AS DATE)`),
      uses: [],
    },
    yesterday: {
      sql: withZone(
        'yesterday',
        [],
        `CAST(timezone({tz}, to_timestamp(${nowSeconds})) AS DATE) - 1`,
      ),
      uses: [],
    },
  };
}

const AGGREGATE_MACROS: Record<string, MacroDefinition> = {
  // ClickHouse's uniq is an approximate distinct count, as is DuckDB's HyperLogLog one.
  uniq: { sql: 'CREATE OR REPLACE TEMP MACRO uniq(x) AS (approx_count_distinct(x))', uses: [] },
  uniqexact: { sql: 'CREATE OR REPLACE TEMP MACRO uniqExact(x) AS (count(DISTINCT x))', uses: [] },
};

/** Every macro by lower-case name (DuckDB resolves function names ignoring case). */
const MACROS: Record<string, MacroDefinition> = {
  ...jsonMacros(),
  ...timeMacros(),
  ...AGGREGATE_MACROS,
};

/**
 * The ClickHouse-style functions SQL mode understands, as ClickHouse spells them. Names starting
 * with `_ch_` are internal helpers.
 */
export const CLICKHOUSE_FUNCTIONS: readonly string[] = [
  ...Object.values(JSON_NAMES),
  'toDateTime',
  'toUnixTimestamp',
  'toDate',
  'toStartOfMinute',
  'toStartOfFiveMinutes',
  'toStartOfFifteenMinutes',
  'toStartOfHour',
  'toStartOfDay',
  'toStartOfWeek',
  'toMonday',
  'toStartOfMonth',
  'toStartOfQuarter',
  'toStartOfYear',
  'now',
  'today',
  'yesterday',
  'uniq',
  'uniqExact',
];

/**
 * The statements creating the macros a query calls (named in `functionNames`, any case) and the
 * helpers they need, helpers first. Creating all of them would slow every new connection; a
 * query usually calls two or three, so only those are made.
 */
export function macroStatementsFor(functionNames: Iterable<string>): string[] {
  const ordered: string[] = [];
  const seen = new Set<string>();
  const visit = (name: string) => {
    const definition = MACROS[name];
    if (!definition || seen.has(name)) return;
    seen.add(name);
    for (const dependency of definition.uses) visit(dependency);
    ordered.push(definition.sql);
  };
  for (const name of functionNames) visit(name.toLowerCase());
  return ordered;
}
