import { createHash } from 'node:crypto';
import type { FilterCondition, FilterGroups, FilterValue } from '@analytics-chart/protocol';
import {
  NUMERIC_TEXT,
  numericFormSql,
  stringFormSql,
} from '../../../storage/clickhouse/clickhouse-forms.ts';
import { boundField } from '../bound-query.ts';
import type {
  ClickHouseBoundQuery,
  ClickHouseField,
  ClickHouseSpelling,
} from './bind-clickhouse-query.ts';

/**
 * Payload fields and filters as ClickHouse SQL, with the DuckDB driver's reading of a field: per
 * event, the first key path spelling the field at which it holds a value (its bound spellings).
 * A spelling whose path has key columns reads its forms from them (present where the string form
 * is not NULL), else from the payload at the path with the same definitions
 * (`clickhouse-forms.ts`), read as ClickHouse's JSON functions can (`clickhouse-readable-json.ts`).
 * Array tests (`includes`) read the JSON, which alone tells an array from a string; substring
 * tests read the string form, which a payload ClickHouse cannot parse (an integer token of 2^64
 * or more) still has from ingest. Field names
 * and filter values are bound parameters.
 *
 * - array elements: the string forms of an array's elements.
 */

/** A statement's parameter values by name; the SQL holds `{name:Type}`. */
type Params = Record<string, unknown>;

/** The placeholder of `value` as a `type`, under a name not yet in `params` (`p<n>`). */
function param(params: Params, type: string, value: unknown): string {
  const name = `p${Object.keys(params).length}`;
  params[name] = value;
  return `{${name}:${type}}`;
}

const NUMERIC_VALUE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** How one spelling of a field is read: whether it holds a value, and its forms. */
interface Spelling {
  present: string;
  string: string;
  number: () => string;
  /** `reading` of the JSON function arguments that reach the path in the payload. */
  json(reading: (keys: string) => string): string;
}

/** The elements' string forms (empty for a value that is not an array: callers check first). */
const arrayForm = (keys: string) =>
  `arrayMap(e -> ${stringFormSql('e')}, JSONExtractArrayRaw(${keys}))`;

/** A spelling read from the payload. */
function jsonSpelling(bound: ClickHouseSpelling, params: Params): Spelling {
  const path = bound.path.map((key) => param(params, 'String', key)).join(', ');
  const read = (reading: (keys: string) => string) =>
    bound.payload((payload) => reading(`${payload}, ${path}`));
  return {
    present: read((keys) => `JSONType(${keys}) NOT IN ('Null', 'Object')`),
    string: read(stringFormSql),
    number: () => {
      const pattern = param(params, 'String', NUMERIC_TEXT);
      return read((keys) => numericFormSql(keys, pattern));
    },
    json: read,
  };
}

/** A spelling read from its key columns where it has them. */
function spelling(bound: ClickHouseSpelling, params: Params): Spelling {
  const { columns } = bound;
  if (!columns) return jsonSpelling(bound, params);
  return {
    present: `${columns.string} IS NOT NULL`,
    string: columns.string,
    number: () => columns.number,
    json: (reading) => jsonSpelling(bound, params).json(reading),
  };
}

/**
 * A reading of `field`: per event, the reading at the first spelling where the event holds a
 * value (JSON null and objects are no value), else the last spelling's (its reading of nothing).
 */
function fieldSql(
  field: ClickHouseField,
  reading: (s: Spelling) => string,
  params: Params,
  read: (s: ClickHouseSpelling, params: Params) => Spelling = spelling,
): string {
  const spellings = field.spellings.map((s) => read(s, params));
  const last = spellings.at(-1) as Spelling;
  if (spellings.length === 1) return reading(last);
  const branches = spellings.slice(0, -1).map((s) => `${s.present}, ${reading(s)}`);
  return `multiIf(${branches.join(', ')}, ${reading(last)})`;
}

/**
 * The payload readings a statement computes once per row, each reading's SQL by its column name:
 * the bound query's relation computes them (`bind-clickhouse-query.ts`) and the rest of the
 * statement reads them as columns. ClickHouse's analyzer resolves an alias again at each of its
 * references, so a reading named inline and read many times costs its planning time many times.
 */
export type PayloadValues = Map<string, string>;

/**
 * `reading` as a column of `values`, named by `key` (what it reads of which field), so that each
 * reading is computed, and its parameters bound, once whichever clauses read it.
 */
function payloadValue(values: PayloadValues, key: unknown[], reading: () => string): string {
  const name = `__v_${createHash('sha256').update(JSON.stringify(key)).digest('hex').slice(0, 16)}`;
  if (!values.has(name)) values.set(name, reading());
  return name;
}

/**
 * For a field read wholly from the payload, the column of `values` holding its value's JSON text
 * at the first spelling where the event holds a value; null where a spelling has key columns.
 * Picking the text first writes each form once for all spellings: a deep path has up to 32
 * spellings, and ClickHouse's planning time grows with the expression.
 */
function payloadValueSql(
  field: ClickHouseField,
  params: Params,
  values: PayloadValues,
): string | null {
  if (field.spellings.some((s) => s.columns !== null)) return null;
  return payloadValue(values, ['text', field.name], () => {
    const raws = field.spellings.map((s) => {
      const path = s.path.map((key) => param(params, 'String', key)).join(', ');
      return s.payload((payload) => `JSONExtractRaw(${payload}, ${path})`);
    });
    const last = raws.at(-1) as string;
    if (raws.length === 1) return last;
    return `multiIf(${raws
      .slice(0, -1)
      .map((raw) => `JSONType(${raw}) NOT IN ('Null', 'Object'), ${raw}`)
      .join(', ')}, ${last})`;
  });
}

/**
 * A reading of a field with key columns: read in place where every spelling has them, else (a
 * spelling read from the payload) as a column of `values`.
 */
function keyedFieldSql(
  field: ClickHouseField,
  form: 'number' | 'string',
  params: Params,
  values: PayloadValues,
): string {
  const reading = (s: Spelling) => (form === 'number' ? s.number() : s.string);
  if (field.spellings.every((s) => s.columns !== null)) return fieldSql(field, reading, params);
  return payloadValue(values, [form, field.name], () => fieldSql(field, reading, params));
}

/** The numeric form of `field` (NULL where it has none). */
export function numericFieldSql(
  field: ClickHouseField,
  params: Params,
  values: PayloadValues,
): string {
  const value = payloadValueSql(field, params, values);
  if (value === null) return keyedFieldSql(field, 'number', params, values);
  return numericFormSql(value, param(params, 'String', NUMERIC_TEXT));
}

/** The string form of `field` (NULL for objects, null and missing fields). */
export function stringFieldSql(
  field: ClickHouseField,
  params: Params,
  values: PayloadValues,
): string {
  const value = payloadValueSql(field, params, values);
  return value === null ? keyedFieldSql(field, 'string', params, values) : stringFormSql(value);
}

function valueNumber(value: FilterValue): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (!NUMERIC_VALUE.test(text)) return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : null;
}

function conditionSql(
  [name, operator, value]: FilterCondition,
  bound: ClickHouseBoundQuery,
  params: Params,
): string {
  const field = boundField(bound, name);
  const values = bound.payloadValues;
  const text = typeof value === 'string' ? value : String(value);
  const n = typeof value === 'boolean' ? null : valueNumber(value);
  const equals = () => {
    const s = `${stringFieldSql(field, params, values)} = ${param(params, 'String', text)}`;
    if (n === null) return `coalesce(${s}, false)`;
    return `coalesce(${s} OR ${numericFieldSql(field, params, values)} = ${param(params, 'Float64', n)}, false)`;
  };
  const includes = () => {
    const v = param(params, 'String', text);
    const value = payloadValueSql(field, params, values);
    // A field with key columns reads its JSON spelling by spelling, named once as well.
    const json = (form: string, reading: (keys: string) => string) =>
      value === null
        ? payloadValue(values, [form, field.name], () =>
            fieldSql(
              field,
              (s) => s.json(reading),
              params,
              (s) => jsonSpelling(s, params),
            ),
          )
        : reading(value);
    return `coalesce(if(${json('is array', (keys) => `JSONType(${keys}) = 'Array'`)},
      has(${json('array', arrayForm)}, ${v}),
      position(${stringFieldSql(field, params, values)}, ${v}) > 0), false)`;
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
      return `coalesce(${numericFieldSql(field, params, values)} ${operator} ${param(params, 'Float64', n)}, false)`;
  }
}

/** Filters in normal form (OR of AND groups) as one boolean that is never NULL. */
export function filtersSql(
  groups: FilterGroups,
  bound: ClickHouseBoundQuery,
  params: Params,
): string {
  if (groups.length === 0) return 'true';
  return `(${groups
    .map((group) =>
      group.length === 0
        ? 'true'
        : `(${group.map((c) => conditionSql(c, bound, params)).join(' AND ')})`,
    )
    .join(' OR ')})`;
}
