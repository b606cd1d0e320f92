import type {
  CollectionQuery,
  FilterCondition,
  FilterGroups,
  FilterValue,
} from '@analytics-chart/protocol';
import type { DuckDBType, DuckDBValue } from '@duckdb/node-api';
import { DOUBLE, VARCHAR } from '../../../storage/duckdb/duckdb-api.ts';
import type { NamedParams } from '../../../storage/duckdb/sql-params.ts';
import type { FieldSql } from './field-sql.ts';

/** Adds a value to a statement's named parameters and answers its placeholder. */
type AddParam = (value: DuckDBValue, type: DuckDBType) => string;

/** The query's filter lists, each as one condition over the bound fields (`TRUE` when empty). */
export interface BoundFilters {
  filters: string;
  compare: string;
  numerator: string;
  denominator: string;
}

/**
 * Every filter list of a query as SQL, written once: values are named parameters of `params`,
 * fields read as `fields` writes them.
 */
export function boundFilters(
  query: CollectionQuery,
  fields: ReadonlyMap<string, FieldSql>,
  params: NamedParams,
): BoundFilters {
  const add: AddParam = (value, type) => {
    const name = `w${Object.keys(params).length}`;
    params[name] = { value, type };
    return `$${name}`;
  };
  const list = (groups: FilterGroups | null | undefined) => filtersSql(groups ?? [], fields, add);
  return {
    filters: list(query.filters),
    compare: list(query.compare_filters),
    numerator: list(query.numerator_filters),
    denominator: list(query.denominator_filters),
  };
}

/**
 * Filters in normal form (OR of AND groups) as one SQL condition for a WHERE or FILTER clause:
 * TRUE where the filters hold, FALSE or NULL elsewhere (either leaves the row out).
 *
 * - `=` matches the string form, and for a numeric-looking value also the numeric form, so
 *   `"42"` and `42` find both `"42"` and `42`; booleans match as `true`/`false`.
 * - `≠` is its negation and holds where the field is missing.
 * - `includes`/`excludes`: case-sensitive substring of the string form; for arrays, whether an
 *   element's string form equals the value. `excludes` holds where the field is missing.
 * - `>`/`<` compare numeric forms and never match a value without one.
 *
 * Positive conditions stay bare comparisons, NULL where the field is missing: AND and OR are
 * monotone, so a NULL in place of FALSE leaves the whole TRUE exactly where it was TRUE, and a
 * bare `column = value` at the top of a WHERE is what DuckDB evaluates inside its scan, skipping
 * row groups whose min/max rule the value out. Negations wrap a condition made never NULL.
 */
function filtersSql(
  groups: FilterGroups,
  fields: ReadonlyMap<string, FieldSql>,
  add: AddParam,
): string {
  if (groups.length === 0) return 'TRUE';
  const ors = groups.map((group) =>
    group.length === 0
      ? 'TRUE'
      : group
          .map((condition) => conditionSql(condition, fieldOf(fields, condition[0]), add))
          .join(' AND '),
  );
  return ors.length === 1 ? `(${ors[0]})` : `(${ors.map((g) => `(${g})`).join(' OR ')})`;
}

/** A field the filters name, as bound. */
function fieldOf(fields: ReadonlyMap<string, FieldSql>, name: string): FieldSql {
  const field = fields.get(name);
  if (!field) throw new Error(`field '${name}' was not bound`);
  return field;
}

/** The string form of a filter value, as events' values are compared with it. */
function valueText(value: FilterValue): string {
  return typeof value === 'string' ? value : String(value);
}

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * The numeric form of a filter value: numbers as they are, numeric-looking strings (decimal
 * notation, optional sign and exponent, surrounding spaces ignored) as their number; else null.
 */
function valueNumber(value: FilterValue): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (!NUMERIC.test(text)) return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : null;
}

/** One condition: TRUE where it holds, FALSE or NULL elsewhere. */
function conditionSql(condition: FilterCondition, f: FieldSql, add: AddParam): string {
  const [, operator, value] = condition;
  switch (operator) {
    case '=':
      return equalsSql(f, value, add);
    case '≠':
      return `(NOT ${definite(equalsSql(f, value, add))})`;
    case 'includes':
      return includesSql(f, value, add);
    case 'excludes':
      return `(NOT ${definite(includesSql(f, value, add))})`;
    case '>':
    case '<': {
      const n = valueNumber(value);
      if (n === null || f.number === null) return 'FALSE';
      return `${f.number} ${operator} ${add(n, DOUBLE)}`;
    }
  }
}

/** A condition's NULL (a missing field) as FALSE, for a negation to hold there. */
function definite(condition: string): string {
  return condition === 'FALSE' ? condition : `coalesce(${condition}, FALSE)`;
}

function equalsSql(f: FieldSql, value: FilterValue, add: AddParam): string {
  const parts: string[] = [];
  const n = valueNumber(value);
  const numeric = n !== null && typeof value !== 'boolean' && f.number !== null;
  // With the numeric test beside it, or for a value no number's text equals, the stored text
  // answers as the string form does (see `FieldSql.stored`).
  const text = f.stored;
  if (text !== null) parts.push(`${text} = ${add(valueText(value), VARCHAR)}`);
  if (numeric) parts.push(`${f.number} = ${add(n, DOUBLE)}`);
  if (parts.length === 0) return 'FALSE';
  return parts.length === 1 ? (parts[0] as string) : `(${parts.join(' OR ')})`;
}

function includesSql(f: FieldSql, value: FilterValue, add: AddParam): string {
  if (f.string === null) return 'FALSE';
  if (f.array !== null) {
    const text = add(valueText(value), VARCHAR);
    return `(CASE WHEN ${f.array} IS NOT NULL THEN list_contains(${f.array}, ${text}) ELSE contains(${f.string}, ${text}) END)`;
  }
  return `contains(${f.string}, ${add(valueText(value), VARCHAR)})`;
}
