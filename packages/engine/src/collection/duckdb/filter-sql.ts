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
 * Filters in normal form (OR of AND groups) as one SQL boolean that is never NULL:
 *
 * - `=` matches the string form, and for a numeric-looking value also the numeric form, so
 *   `"42"` and `42` find both `"42"` and `42`; booleans match as `true`/`false`.
 * - `≠` is its negation and holds where the field is missing.
 * - `includes`/`excludes`: case-sensitive substring of the string form; for arrays, whether an
 *   element's string form equals the value. `excludes` holds where the field is missing.
 * - `>`/`<` compare numeric forms and never match a value without one.
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

function conditionSql(condition: FilterCondition, f: FieldSql, params: SqlParams): string {
  const [, operator, value] = condition;
  switch (operator) {
    case '=':
      return equalsSql(f, value, params);
    case '≠':
      return `(NOT ${equalsSql(f, value, params)})`;
    case 'includes':
      return includesSql(f, value, params);
    case 'excludes':
      return `(NOT ${includesSql(f, value, params)})`;
    case '>':
    case '<': {
      const n = valueNumber(value);
      // The value first: a field's form is built only where the SQL will use it.
      if (n === null || f.number === null) return 'FALSE';
      return `coalesce(${f.number} ${operator} ${params.number(n)}, FALSE)`;
    }
  }
}

function equalsSql(f: FieldSql, value: FilterValue, params: SqlParams): string {
  const parts: string[] = [];
  if (f.string !== null) parts.push(`${f.string} = ${params.text(valueText(value))}`);
  const n = valueNumber(value);
  if (n !== null && typeof value !== 'boolean' && f.number !== null) {
    parts.push(`${f.number} = ${params.number(n)}`);
  }
  return parts.length === 0 ? 'FALSE' : `coalesce(${parts.join(' OR ')}, FALSE)`;
}

function includesSql(f: FieldSql, value: FilterValue, params: SqlParams): string {
  // A parameter only where the SQL uses it: DuckDB refuses to bind one the statement lacks.
  if (f.string === null) return 'FALSE';
  if (f.array !== null) {
    const text = params.text(valueText(value));
    return `coalesce(CASE WHEN ${f.array} IS NOT NULL THEN list_contains(${f.array}, ${text}) ELSE contains(${f.string}, ${text}) END, FALSE)`;
  }
  return `coalesce(contains(${f.string}, ${params.text(valueText(value))}), FALSE)`;
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

/** `a AND b`, leaving out conditions that are plainly TRUE. */
export function and(...conditions: string[]): string {
  const kept = conditions.filter((c) => c !== 'TRUE' && c !== '(TRUE)');
  return kept.length ? kept.join(' AND ') : 'TRUE';
}
