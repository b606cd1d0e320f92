import * as z from 'zod';
import { FILTER_OPERATORS, type FilterOperator, matchWord } from './vocabulary.ts';

/** A filter value as clients send it: the spec allows strings and numbers alike. */
export type FilterValue = string | number | boolean;

/** One condition, `[field, operator, value]`. A field is a top-level key or a dotted path. */
export type FilterCondition = [field: string, operator: FilterOperator, value: FilterValue];

/**
 * Filters in normal form: a list of groups combined with OR, each a list of conditions combined
 * with AND. `[]` matches everything; a flat list from a client becomes a single group.
 */
export type FilterGroups = FilterCondition[][];

const MAX_CONDITIONS = 100;

const operatorSchema = z.string({ error: 'expected an operator string' }).transform((op, ctx) => {
  const canonical = matchWord(FILTER_OPERATORS, op, { '!=': '≠', '<>': '≠' });
  if (canonical) return canonical;
  ctx.addIssue({
    code: 'custom',
    message: `unknown operator '${op.slice(0, 20)}'; use one of =, ≠ (or !=), includes, excludes, >, <`,
  });
  return z.NEVER;
});

const valueSchema = z.union([z.string().max(1000), z.number(), z.boolean()], {
  error: 'expected a string, number or boolean value',
});

/** One `[field, operator, value]` condition. */
export const filterConditionSchema = z
  .array(z.unknown(), { error: 'expected a condition [field, operator, value]' })
  .transform((items, ctx): FilterCondition => {
    if (items.length !== 3) {
      ctx.addIssue({
        code: 'custom',
        message: `expected a condition [field, operator, value], got ${items.length} item${items.length === 1 ? '' : 's'}`,
      });
      return z.NEVER;
    }
    const [field, op, value] = items;
    if (typeof field !== 'string' || field.trim().length === 0 || field.length > 200) {
      ctx.addIssue({ code: 'custom', path: [0], message: 'expected a field name' });
      return z.NEVER;
    }
    const operator = operatorSchema.safeParse(op);
    const parsedValue = valueSchema.safeParse(value);
    if (!operator.success) {
      for (const issue of operator.error.issues)
        ctx.addIssue({ ...issue, path: [1, ...issue.path] });
    }
    if (!parsedValue.success) {
      for (const issue of parsedValue.error.issues)
        ctx.addIssue({ ...issue, path: [2, ...issue.path] });
    }
    if (!operator.success || !parsedValue.success) return z.NEVER;
    return [field, operator.data, parsedValue.data];
  });

function isConditionList(items: unknown[]): boolean {
  // A group list holds arrays of arrays; a flat list holds conditions whose first item is a name.
  return !items.some((item) => Array.isArray(item) && Array.isArray(item[0]));
}

/**
 * Filters in either shape the spec allows, a flat AND list or a list of OR groups, normalised to
 * {@link FilterGroups}. `null` (as some clients send) means no filter.
 */
export const filtersSchema = z
  .union([z.array(z.unknown()), z.null()], { error: 'expected a list of filter conditions' })
  .transform((items, ctx): FilterGroups => {
    if (items === null || items.length === 0) return [];
    const grouped = !isConditionList(items);
    const groups: FilterGroups = [];
    let total = 0;
    for (const [g, group] of (grouped ? items : [items]).entries()) {
      if (!Array.isArray(group)) {
        ctx.addIssue({ code: 'custom', path: [g], message: 'expected a group of conditions' });
        continue;
      }
      const conditions: FilterCondition[] = [];
      for (const [c, raw] of group.entries()) {
        const parsed = filterConditionSchema.safeParse(raw);
        const path = grouped ? [g, c] : [c];
        if (parsed.success) conditions.push(parsed.data);
        else
          for (const issue of parsed.error.issues)
            ctx.addIssue({ ...issue, path: [...path, ...issue.path] });
      }
      total += conditions.length;
      groups.push(conditions);
    }
    if (total > MAX_CONDITIONS) {
      ctx.addIssue({ code: 'custom', message: `at most ${MAX_CONDITIONS} conditions are allowed` });
    }
    return groups;
  });

/** `a ∧ b` for two filters in normal form: every pairing of a group of `a` with a group of `b`. */
export function andFilters(a: FilterGroups, b: FilterGroups): FilterGroups {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  return a.flatMap((left) => b.map((right) => [...left, ...right]));
}
