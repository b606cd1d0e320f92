import type { SqlParams } from '../../storage/duckdb/sql-params.ts';
import { jsonPointer } from '../../storage/key-path.ts';
import type {
  DuckDbBoundQuery,
  DuckDbField,
  DuckDbSpelling,
} from '../bind/duckdb/bind-duckdb-query.ts';
import type { QueryContext } from './collection-relation.ts';

/**
 * The SQL expressions that read one field of the events, or null where no event can have that
 * form: `string` (the string form: strings, booleans, numbers, arrays as JSON text), `number`
 * (the numeric form: numbers and numeric-looking strings) and `array` (element string forms).
 * Typed keys read their columns; paths bound to the payload are extracted with the same
 * semantics; a field with no spelling is missing from every event.
 */
export interface FieldSql {
  readonly string: string | null;
  readonly number: string | null;
  readonly array: string | null;
  /**
   * The string form as stored: `string` itself, except that a typed key's bare column leaves
   * out the rows of files written before every number had a string form, which hold only the
   * numeric form. Their text is a number's JSON text, so `stored = v OR number = n(v)` answers
   * as `string = v OR number = n(v)` does, and `stored = v` alone for a value that is not
   * numeric-looking; a bare column is what DuckDB can compare inside its scan.
   */
  readonly stored: string | null;
}

/**
 * Forms built when first read: building one may add parameters, and a statement must use every
 * parameter it binds, so a form the caller never puts into SQL must never be built.
 */
function lazyForms(build: {
  string: () => string | null;
  number: () => string | null;
  array: () => string | null;
  stored?: () => string | null;
}): FieldSql {
  const built: Partial<Record<keyof FieldSql, string | null>> = {};
  const get = (form: keyof FieldSql) => {
    if (!(form in built)) built[form] = (build[form] ?? build.string)();
    return built[form] ?? null;
  };
  return {
    get string() {
      return get('string');
    },
    get number() {
      return get('number');
    },
    get array() {
      return get('array');
    },
    get stored() {
      return get('stored');
    },
  };
}

const MISSING: FieldSql = { string: null, number: null, array: null, stored: null };

/** A spelling read from its typed columns. */
function typedForms(
  spelling: Extract<DuckDbSpelling, { from: 'columns' }>,
  forms: DuckDbBoundQuery['forms'],
  params: SqlParams,
): FieldSql {
  const { string: s, number: n, array } = spelling;
  // Files written before every number had a string form hold rows with n but no s: their text
  // comes from the payload, as the typed insert reads it now.
  const extracted = () => extractedString(jsonPointer(spelling.path), forms, params);
  const string = () =>
    n
      ? s
        ? `CASE WHEN ${s} IS NULL AND ${n} IS NOT NULL THEN ${extracted()} ELSE ${s} END`
        : `CASE WHEN ${n} IS NOT NULL THEN ${extracted()} END`
      : s;
  return lazyForms({ string, number: () => n, array: () => array, stored: () => s });
}

/** The string form of the value at `pointer`, read from the payload (as the typed insert does). */
function extractedString(
  pointer: string,
  forms: DuckDbBoundQuery['forms'],
  params: SqlParams,
): string {
  const p = params.text(pointer);
  return forms.storedString(`json_extract_string("json", ${p})`, '"json"', p, true);
}

/** A path without typed columns, read from the payload on every row. */
function extractedForms(
  path: string[],
  forms: DuckDbBoundQuery['forms'],
  params: SqlParams,
): FieldSql {
  const pointer = jsonPointer(path);
  const string = () => extractedString(pointer, forms, params);
  return lazyForms({
    string,
    number: () => forms.numeric(string()),
    array: () => {
      const p = params.text(pointer);
      return `CASE WHEN json_type("json", ${p}) = 'ARRAY' THEN ${forms.arrayElements(`json_extract("json", ${p})`)} END`;
    },
  });
}

/**
 * A bound field's forms. Each event's value is that of the first spelling at which the event
 * holds a value, so the answer for one event never depends on the others.
 */
export function fieldSql(
  field: DuckDbField,
  forms: DuckDbBoundQuery['forms'],
  params: SqlParams,
): FieldSql {
  return firstHeld(
    field.spellings.map((s) =>
      s.from === 'columns' ? typedForms(s, forms, params) : extractedForms(s.path, forms, params),
    ),
  );
}

/** Per row, the forms of the first candidate whose string form is there (every value has one). */
function firstHeld(candidates: FieldSql[]): FieldSql {
  const [only] = candidates;
  if (!only) return MISSING;
  if (candidates.length === 1) return only;
  const strings = () => candidates.map((c) => c.string ?? 'NULL');
  const pick = (form: 'number' | 'array') => () => {
    if (candidates.every((c) => c[form] === null)) return null;
    const held = strings();
    const branches = candidates.map(
      (c, i) => `WHEN ${held[i]} IS NOT NULL THEN ${c[form] ?? 'NULL'}`,
    );
    return `CASE ${branches.join(' ')} END`;
  };
  return lazyForms({
    string: () => `coalesce(${strings().join(', ')})`,
    number: pick('number'),
    array: pick('array'),
  });
}

/** Field resolver over a query's bound fields and a statement's parameters. */
export function fields(ctx: QueryContext, params: SqlParams): (name: string) => FieldSql {
  const cache = new Map<string, FieldSql>();
  return (name) => {
    let f = cache.get(name);
    if (!f) {
      // Read from the bound query's own map: a name it lacks is the renderer's bug.
      const field = ctx.bound.fields.get(name);
      if (!field) throw new Error(`field '${name}' was not bound`);
      f = fieldSql(field, ctx.bound.forms, params);
      cache.set(name, f);
    }
    return f;
  };
}

/** The metric's numeric expression, or null when the aggregation needs none or it is missing. */
export function metricSql(ctx: QueryContext, params: SqlParams): string | null {
  const { metric } = ctx.bound;
  if (ctx.query.aggregation === 'Count' || !metric) return null;
  return fieldSql(metric, ctx.bound.forms, params).number;
}
