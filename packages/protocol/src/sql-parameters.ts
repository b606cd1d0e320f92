/**
 * Typed SQL parameters: ClickHouse's query-parameter syntax `{name:Type}` inside `sql_query`,
 * with the values sent beside the SQL (an extension of the hosted service's request, which has
 * no bind parameters). Values are never spliced into SQL text by the engine: it binds them as
 * prepared-statement parameters. This module finds the placeholders and checks values against
 * their declared types; it is shared by the engine and the edge so both read SQL the same way.
 */

/** The parameter types SQL mode knows, by their ClickHouse names. */
export const SQL_PARAMETER_TYPES = [
  'String',
  'Int64',
  'UInt32',
  'Float64',
  'Date',
  'DateTime',
] as const;
/** One of {@link SQL_PARAMETER_TYPES}. */
export type SqlParameterType = (typeof SQL_PARAMETER_TYPES)[number];

/**
 * A parameter's value once checked against its type: text for `String`, `Date` (`YYYY-MM-DD`)
 * and `Int64` (decimal digits, so any 64-bit value survives JSON), a number for `UInt32`,
 * `Float64` and `DateTime` (Unix seconds).
 */
export type SqlParameterValue = string | number;

/** A checked parameter: its type and normalized value. */
export interface SqlParameter {
  type: SqlParameterType;
  value: SqlParameterValue;
}

/** One `{name:Type}` in SQL text: where it is, so it can be replaced. */
export interface SqlPlaceholder {
  name: string;
  type: SqlParameterType;
  /** Offset of `{`. */
  start: number;
  /** Offset just past `}`. */
  end: number;
}

/** Longest `String` parameter value, in characters. */
export const MAX_SQL_PARAMETER_LENGTH = 1000;

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*):([A-Za-z][A-Za-z0-9]*)\}/y;
const TYPES: ReadonlySet<string> = new Set(SQL_PARAMETER_TYPES);
/** Half of a UTF-16 pair without its other half: no UTF-8 text can carry it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

type Found = { ok: true; placeholders: SqlPlaceholder[] } | { ok: false; error: string };

/**
 * Finds every `{name:Type}` in SQL code, skipping string literals (`'…'`, `E'…'`, `$tag$…$tag$`),
 * quoted identifiers and comments, as DuckDB's parser does. `{name:Word}` with a word that is not
 * a parameter type is an error rather than SQL, so a typo such as `{tenant:string}` is caught
 * (write DuckDB struct literals with quoted keys, `{'a': 1}`). A name used with two types is an
 * error too.
 */
export function findSqlPlaceholders(sql: string): Found {
  const placeholders: SqlPlaceholder[] = [];
  const types = new Map<string, SqlParameterType>();
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i];
    const next = sql[i + 1];
    if (ch === "'" || ((ch === 'E' || ch === 'e') && next === "'" && !identChar(sql[i - 1]))) {
      i = skipString(sql, ch === "'" ? i : i + 1, ch !== "'");
    } else if (ch === '"') {
      i = skipQuoted(sql, i, '"');
    } else if (ch === '-' && next === '-') {
      const eol = sql.indexOf('\n', i);
      i = eol < 0 ? sql.length : eol + 1;
    } else if (ch === '/' && next === '*') {
      i = skipBlockComment(sql, i);
    } else if (ch === '$' && !identChar(sql[i - 1])) {
      i = skipDollarQuoted(sql, i);
    } else if (ch === '{') {
      PLACEHOLDER.lastIndex = i;
      const match = PLACEHOLDER.exec(sql);
      if (!match) {
        i++;
        continue;
      }
      const [whole, name = '', type = ''] = match;
      if (!TYPES.has(type)) {
        return {
          ok: false,
          error: `{${name}:${type.slice(0, 20)}} names no parameter type; use one of ${SQL_PARAMETER_TYPES.join(', ')}`,
        };
      }
      const known = types.get(name);
      if (known !== undefined && known !== type) {
        return { ok: false, error: `parameter '${name}' is used as both ${known} and ${type}` };
      }
      types.set(name, type as SqlParameterType);
      placeholders.push({ name, type: type as SqlParameterType, start: i, end: i + whole.length });
      i += whole.length;
    } else {
      i++;
    }
  }
  return { ok: true, placeholders };
}

function identChar(ch: string | undefined): boolean {
  return ch !== undefined && /[A-Za-z0-9_]/.test(ch);
}

/** Past a `'…'` literal whose quote is at `at`; `''` is a quote, and in E-strings `\` escapes. */
function skipString(sql: string, at: number, escapes: boolean): number {
  let i = at + 1;
  while (i < sql.length) {
    const ch = sql[i];
    if (escapes && ch === '\\') i += 2;
    else if (ch === "'") {
      if (sql[i + 1] === "'") i += 2;
      else return i + 1;
    } else i++;
  }
  return sql.length;
}

function skipQuoted(sql: string, at: number, quote: string): number {
  let i = at + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else i++;
  }
  return sql.length;
}

/** Block comments nest, as in DuckDB (PostgreSQL's grammar). */
function skipBlockComment(sql: string, at: number): number {
  let depth = 0;
  let i = at;
  while (i < sql.length) {
    if (sql[i] === '/' && sql[i + 1] === '*') {
      depth++;
      i += 2;
    } else if (sql[i] === '*' && sql[i + 1] === '/') {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else i++;
  }
  return sql.length;
}

/** `$tag$…$tag$` (or `$$…$$`) is a string; any other `$` (a `$1` parameter) is passed over. */
function skipDollarQuoted(sql: string, at: number): number {
  const open = /\$([A-Za-z_][A-Za-z0-9_]*)?\$/y;
  open.lastIndex = at;
  const match = open.exec(sql);
  if (!match) return at + 1;
  const close = sql.indexOf(match[0], at + match[0].length);
  return close < 0 ? sql.length : close + match[0].length;
}

/** Checks one value against its type; the normalized value, or why it does not fit. */
export function checkSqlParameterValue(
  type: SqlParameterType,
  value: unknown,
): { ok: true; value: SqlParameterValue } | { ok: false; error: string } {
  const fail = (what: string) => ({ ok: false as const, error: `expected ${what}` });
  switch (type) {
    case 'String':
      if (typeof value !== 'string') return fail('a String (text)');
      if (value.length > MAX_SQL_PARAMETER_LENGTH) {
        return fail(`a String of at most ${MAX_SQL_PARAMETER_LENGTH} characters`);
      }
      if (LONE_SURROGATE.test(value)) return fail('a String of whole Unicode characters');
      return { ok: true, value };
    case 'Int64': {
      const text = integerText(value);
      if (text === null) return fail('an Int64 (an integer, or its decimal digits as text)');
      const n = BigInt(text);
      if (n < INT64_MIN || n > INT64_MAX) return fail('an Int64 within ±2^63');
      return { ok: true, value: n.toString() };
    }
    case 'UInt32': {
      const text = integerText(value);
      const n = text === null ? Number.NaN : Number(text);
      if (!(n >= 0 && n <= 0xffff_ffff)) return fail('a UInt32 (an integer from 0 to 4294967295)');
      return { ok: true, value: n };
    }
    case 'Float64':
      if (typeof value !== 'number' || !Number.isFinite(value)) return fail('a finite Float64');
      return { ok: true, value };
    case 'Date': {
      if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) {
        return fail('a Date as YYYY-MM-DD');
      }
      const date = new Date(`${value}T00:00:00Z`);
      if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value) {
        return fail('a Date that exists on the calendar');
      }
      return { ok: true, value };
    }
    case 'DateTime': {
      if (typeof value === 'number') {
        if (!Number.isSafeInteger(value)) return fail('a DateTime as whole Unix seconds');
        return { ok: true, value };
      }
      const iso =
        typeof value === 'string' &&
        /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2})$/.test(value)
          ? Date.parse(value)
          : Number.NaN;
      if (Number.isNaN(iso)) {
        return fail('a DateTime as Unix seconds or an ISO instant such as 2024-03-05T14:00:00Z');
      }
      return { ok: true, value: iso / 1000 };
    }
  }
}

function integerText(value: unknown): string | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? String(value) : null;
  if (typeof value === 'string' && /^-?\d{1,20}$/.test(value)) return value;
  return null;
}

/** SQL text with its placeholders and the checked value of each parameter. */
export interface BoundSql {
  placeholders: SqlPlaceholder[];
  parameters: Record<string, SqlParameter>;
}

/**
 * Pairs SQL text with parameter values: every placeholder needs a value of its type, and every
 * value a placeholder (an unused one is most likely a misspelt name). Fails with one sentence.
 */
export function bindSqlParameters(
  sql: string,
  values: Readonly<Record<string, unknown>> | undefined,
): { ok: true; value: BoundSql } | { ok: false; error: string } {
  const found = findSqlPlaceholders(sql);
  if (!found.ok) return found;
  const given = values ?? {};
  const parameters: Record<string, SqlParameter> = {};
  for (const { name, type } of found.placeholders) {
    if (Object.hasOwn(parameters, name)) continue;
    if (!Object.hasOwn(given, name)) {
      return { ok: false, error: `parameter '${name}' (${type}) has no value in parameters` };
    }
    const checked = checkSqlParameterValue(type, given[name]);
    if (!checked.ok) return { ok: false, error: `parameter '${name}': ${checked.error}` };
    parameters[name] = { type, value: checked.value };
  }
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(parameters, name)) {
      return {
        ok: false,
        error: `parameter '${name.slice(0, 64)}' is not used by the SQL (no {${name.slice(0, 64)}:Type} in it)`,
      };
    }
  }
  return { ok: true, value: { placeholders: found.placeholders, parameters } };
}

/** SQL text with each placeholder replaced by what `render` returns for it (last to first). */
export function replaceSqlPlaceholders(
  sql: string,
  placeholders: readonly SqlPlaceholder[],
  render: (placeholder: SqlPlaceholder) => string,
): string {
  let out = sql;
  for (let i = placeholders.length - 1; i >= 0; i--) {
    const p = placeholders[i] as SqlPlaceholder;
    out = `${out.slice(0, p.start)}${render(p)}${out.slice(p.end)}`;
  }
  return out;
}
