import type { FilterCondition, FilterGroups, FilterValue } from '@analytics-chart/protocol';
import type { ClickHouseParams } from '../../storage/clickhouse/clickhouse-params.ts';
import { comparePaths } from '../../storage/key-path.ts';

/**
 * Payload fields and filters as ClickHouse SQL over the `json` column, with the DuckDB driver's
 * reading of a field: per event, the first key path spelling the field at which it holds a value
 * ({@link fieldSpellings}). A spelling whose path has a key column is read from that column (the
 * value's JSON text, so the same functions without path arguments read the same value), else from
 * `json` at the path. Field names and filter values are bound parameters.
 *
 * - numeric form: a JSON number, or a string that is a decimal number (sign, exponent and
 *   surrounding spaces allowed); else NULL.
 * - string form: strings as they are, numbers as their JSON text (ClickHouse's, with the `+` of
 *   a positive exponent that JavaScript writes), booleans as `true`/`false`, arrays as compact
 *   JSON; objects and null have none.
 * - array elements: the string forms of an array's elements.
 */

const NUMERIC_TEXT = '^\\s*[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?\\s*$';
const NUMERIC_VALUE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** The SQL of one reading of a field, given the JSON path arguments (`json, k1, k2…`). */
type Reading = (keys: string) => string;

const numeric =
  (params: ClickHouseParams): Reading =>
  (keys) => {
    const text = params.add('String', NUMERIC_TEXT);
    return `multiIf(JSONType(${keys}) IN ('Int64', 'UInt64', 'Double'), JSONExtractFloat(${keys}),
      JSONType(${keys}) = 'String' AND match(JSONExtractString(${keys}), ${text}),
        toFloat64OrNull(replaceRegexpOne(trimBoth(JSONExtractString(${keys})), '^\\\\+', '')),
      NULL)`;
  };

/** The string form of a JSON value found at `keys` (also used for array elements, keys = `e`). */
const stringForm: Reading = (keys) =>
  `multiIf(JSONType(${keys}) = 'String', JSONExtractString(${keys}),
    JSONType(${keys}) IN ('Int64', 'UInt64', 'Double'),
      replaceRegexpOne(JSONExtractRaw(${keys}), 'e([0-9])', 'e+\\\\1'),
    JSONType(${keys}) = 'Bool', if(JSONExtractBool(${keys}), 'true', 'false'),
    JSONType(${keys}) = 'Array', JSONExtractRaw(${keys}),
    NULL)`;

/** The elements' string forms (empty for a value that is not an array: callers check first). */
const arrayForm: Reading = (keys) =>
  `arrayMap(e -> ${stringForm('e')}, JSONExtractArrayRaw(${keys}))`;

/** Spellings of a field tried per event when it has more dots than this: the literal key and the full split. */
const MAX_SPELLED_PARTS = 6;

/**
 * The key paths that spell a dotted field (`a.b.c`: `a.b.c`; `a.b` › `c`; `a` › `b.c`;
 * `a` › `b` › `c`), in the order the DuckDB driver tries them: fewer keys first, then longer
 * keys from the left. A field of more than six parts: the literal key, then split at every dot.
 */
export function fieldSpellings(field: string): string[][] {
  const parts = field.split('.');
  if (parts.length > MAX_SPELLED_PARTS) return parts.length > 1 ? [[field], parts] : [parts];
  const out: string[][] = [];
  // Each of the parts.length - 1 dots either separates two keys or stays inside one.
  for (let mask = 0; mask < 2 ** (parts.length - 1); mask++) {
    const path: string[] = [parts[0] as string];
    for (let i = 1; i < parts.length; i++) {
      if (mask & (1 << (i - 1))) path.push(parts[i] as string);
      else path[path.length - 1] += `.${parts[i]}`;
    }
    out.push(path);
  }
  return out.sort(comparePaths);
}

/**
 * A reading of `field`: per event, the reading at the first spelling where the event holds a
 * value (JSON null and objects are no value), else the last spelling's (its reading of nothing).
 */
function fieldSql(field: string, reading: Reading, params: ClickHouseParams): string {
  const paths = fieldSpellings(field).map((path) => readingArgs(path, params));
  if (paths.length === 1) return reading(paths[0] as string);
  const branches = paths
    .slice(0, -1)
    .map((keys) => `JSONType(${keys}) NOT IN ('Null', 'Object'), ${reading(keys)}`);
  return `multiIf(${branches.join(', ')}, ${reading(paths.at(-1) as string)})`;
}

/** The JSON function arguments that reach a path: its key column, or `json` and the bound keys. */
function readingArgs(path: string[], params: ClickHouseParams): string {
  return (
    params.columns.column(path) ??
    `json, ${path.map((key) => params.add('String', key)).join(', ')}`
  );
}

/** The numeric form of `field` (NULL where it has none). */
export function numericFieldSql(field: string, params: ClickHouseParams): string {
  return fieldSql(field, numeric(params), params);
}

/** The string form of `field` (NULL for objects, null and missing fields). */
export function stringFieldSql(field: string, params: ClickHouseParams): string {
  return fieldSql(field, stringForm, params);
}

function valueNumber(value: FilterValue): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (!NUMERIC_VALUE.test(text)) return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : null;
}

function conditionSql([field, operator, value]: FilterCondition, params: ClickHouseParams): string {
  const text = typeof value === 'string' ? value : String(value);
  const n = typeof value === 'boolean' ? null : valueNumber(value);
  const equals = () => {
    const s = `${fieldSql(field, stringForm, params)} = ${params.add('String', text)}`;
    if (n === null) return `coalesce(${s}, false)`;
    return `coalesce(${s} OR ${numericFieldSql(field, params)} = ${params.add('Float64', n)}, false)`;
  };
  const includes = () => {
    const v = params.add('String', text);
    return `coalesce(if(${fieldSql(field, (k) => `JSONType(${k}) = 'Array'`, params)},
      has(${fieldSql(field, arrayForm, params)}, ${v}),
      position(${fieldSql(field, stringForm, params)}, ${v}) > 0), false)`;
  };
  switch (operator) {
    case '=':
      return equals();
    case '≠':
      return `(NOT ${equals()})`;
    case 'includes':
      return includes();
    case 'excludes':
      return `(NOT ${includes()})`;
    case '>':
    case '<':
      if (n === null) return 'false';
      return `coalesce(${numericFieldSql(field, params)} ${operator} ${params.add('Float64', n)}, false)`;
  }
}

/** Filters in normal form (OR of AND groups) as one boolean that is never NULL. */
export function filtersSql(groups: FilterGroups, params: ClickHouseParams): string {
  if (groups.length === 0) return 'true';
  return `(${groups
    .map((group) =>
      group.length === 0 ? 'true' : `(${group.map((c) => conditionSql(c, params)).join(' AND ')})`,
    )
    .join(' OR ')})`;
}
