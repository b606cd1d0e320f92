import type { FilterCondition, FilterGroups, FilterValue } from '@analytics-chart/protocol';
import type { ClickHouseParams } from '../../storage/clickhouse/clickhouse-params.ts';

/**
 * Payload fields and filters as ClickHouse SQL over the `json` column, with the DuckDB driver's
 * reading of a field: the literal top-level key when the payload has it, else the dotted path
 * into objects. Field names and filter values are bound parameters.
 *
 * - numeric form: a JSON number, or a string that is a decimal number (sign, exponent and
 *   surrounding spaces allowed); else NULL.
 * - string form: strings as they are, numbers as their shortest decimal text, booleans as
 *   `true`/`false`, arrays as compact JSON; objects and null have none.
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
    JSONType(${keys}) IN ('Int64', 'UInt64', 'Double'), toString(JSONExtractFloat(${keys})),
    JSONType(${keys}) = 'Bool', if(JSONExtractBool(${keys}), 'true', 'false'),
    JSONType(${keys}) = 'Array', JSONExtractRaw(${keys}),
    NULL)`;

/** The elements' string forms (empty for a value that is not an array: callers check first). */
const arrayForm: Reading = (keys) =>
  `arrayMap(e -> ${stringForm('e')}, JSONExtractArrayRaw(${keys}))`;

/** A reading of `field` with the literal-key-first rule. */
function fieldSql(field: string, reading: Reading, params: ClickHouseParams): string {
  const literal = `json, ${params.add('String', field)}`;
  if (!field.includes('.')) return reading(literal);
  const path = `json, ${field
    .split('.')
    .map((part) => params.add('String', part))
    .join(', ')}`;
  return `if(JSONHas(${literal}), ${reading(literal)}, ${reading(path)})`;
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
