import type {
  FilterCondition,
  FilterGroups,
  FilterValue,
  TimeWindow,
} from '@analytics-chart/protocol';
import type { SqlParams } from '../../storage/duckdb/sql-params.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import type { QueryContext } from './collection-relation.ts';
import { type FieldSql, fields } from './field-sql.ts';

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
export function filtersSql(
  groups: FilterGroups,
  field: (name: string) => FieldSql,
  params: SqlParams,
): string {
  if (groups.length === 0) return 'TRUE';
  const ors = groups.map((group) =>
    group.length === 0
      ? 'TRUE'
      : group
          .map((condition) => conditionSql(condition, field(condition[0]), params))
          .join(' AND '),
  );
  return ors.length === 1 ? `(${ors[0]})` : `(${ors.map((g) => `(${g})`).join(' OR ')})`;
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
function conditionSql(condition: FilterCondition, f: FieldSql, params: SqlParams): string {
  const [, operator, value] = condition;
  switch (operator) {
    case '=':
      return equalsSql(f, value, params);
    case '≠':
      return `(NOT ${definite(equalsSql(f, value, params))})`;
    case 'includes':
      return includesSql(f, value, params);
    case 'excludes':
      return `(NOT ${definite(includesSql(f, value, params))})`;
    case '>':
    case '<': {
      const n = valueNumber(value);
      // The value first: a field's form is built only where the SQL will use it.
      if (n === null || f.number === null) return 'FALSE';
      return `${f.number} ${operator} ${params.number(n)}`;
    }
  }
}

/** A condition's NULL (a missing field) as FALSE, for a negation to hold there. */
function definite(condition: string): string {
  return condition === 'FALSE' ? condition : `coalesce(${condition}, FALSE)`;
}

function equalsSql(f: FieldSql, value: FilterValue, params: SqlParams): string {
  const parts: string[] = [];
  const n = valueNumber(value);
  const numeric = n !== null && typeof value !== 'boolean' && f.number !== null;
  // With the numeric test beside it, or for a value no number's text equals, the stored text
  // answers as the string form does (see `FieldSql.stored`).
  const text = f.stored;
  if (text !== null) parts.push(`${text} = ${params.text(valueText(value))}`);
  if (numeric) parts.push(`${f.number} = ${params.number(n)}`);
  if (parts.length === 0) return 'FALSE';
  return parts.length === 1 ? (parts[0] as string) : `(${parts.join(' OR ')})`;
}

function includesSql(f: FieldSql, value: FilterValue, params: SqlParams): string {
  // A parameter only where the SQL uses it: DuckDB refuses to bind one the statement lacks.
  if (f.string === null) return 'FALSE';
  if (f.array !== null) {
    const text = params.text(valueText(value));
    return `(CASE WHEN ${f.array} IS NOT NULL THEN list_contains(${f.array}, ${text}) ELSE contains(${f.string}, ${text}) END)`;
  }
  return `contains(${f.string}, ${params.text(valueText(value))})`;
}

/** A filter list as SQL, against the query's collection (`TRUE` when there is none). */
export function whereFilters(ctx: QueryContext, groups: FilterGroups, params: SqlParams): string {
  return filtersSql(groups, fields(ctx, params), params);
}

/** `timestamp` within a window (both ends exclusive), as whole seconds. */
export function windowSql(window: TimeWindow, params: SqlParams): string {
  const { lo, hi } = windowSeconds(window);
  return `"timestamp" BETWEEN ${params.integer(lo)} AND ${params.integer(hi)}`;
}

/** The condition of one window's rows: `timestamp` within it, and the filters. */
export function windowWhere(
  ctx: QueryContext,
  window: TimeWindow,
  groups: FilterGroups,
  params: SqlParams,
): string {
  return and(windowSql(window, params), whereFilters(ctx, groups, params));
}

/** `a AND b`, leaving out conditions that are plainly TRUE. */
export function and(...conditions: string[]): string {
  const kept = conditions.filter((c) => c !== 'TRUE' && c !== '(TRUE)');
  return kept.length ? kept.join(' AND ') : 'TRUE';
}
