import {
  type Catalog,
  type CollectionEntry,
  type KeyColumns,
  keyColumn,
} from '../../storage/duckdb/catalog.ts';
import { numericForm, readFromPayload, storedStringForm } from '../../storage/duckdb/key-typing.ts';
import type { SqlParams } from '../../storage/duckdb/sql-params.ts';
import { comparePaths, jsonPointer } from '../../storage/key-path.ts';
import { MAX_DEPTH } from '../../storage/seen-key.ts';
import type { QueryContext } from './collection-relation.ts';

/**
 * The SQL expressions that read one field of the events, or null where no event can have that
 * form: `string` (the string form: strings, booleans, numbers, arrays as JSON text), `number`
 * (the numeric form: numbers and numeric-looking strings) and `array` (element string forms).
 * Typed keys read their columns; deeper paths, keys only wide events held and keys of an
 * overflowed collection fall back to JSON extraction with the same semantics; any other field is missing from every event.
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

/** One path that spells the field: how to read its string, numeric and array forms. */
interface Candidate {
  path: string[];
  sql: FieldSql;
}

/** A typed key's forms, read from its columns. */
function typedCandidate(key: KeyColumns, params: SqlParams): Candidate {
  const s = key.hasString ? keyColumn(key, 's') : null;
  const n = key.hasNumber ? keyColumn(key, 'n') : null;
  // Files written before every number had a string form hold rows with n but no s: their text
  // comes from the payload, as the typed insert reads it now.
  const extracted = () => extractedString(jsonPointer(key.path), params);
  const string = () =>
    n
      ? s
        ? `CASE WHEN ${s} IS NULL AND ${n} IS NOT NULL THEN ${extracted()} ELSE ${s} END`
        : `CASE WHEN ${n} IS NOT NULL THEN ${extracted()} END`
      : s;
  const array = key.hasArray ? keyColumn(key, 'a') : null;
  return {
    path: key.path,
    sql: lazyForms({ string, number: () => n, array: () => array, stored: () => s }),
  };
}

/** The string form of the value at `pointer`, read from the payload (as the typed insert does). */
function extractedString(pointer: string, params: SqlParams): string {
  const p = params.text(pointer);
  return storedStringForm(`json_extract_string("json", ${p})`, '"json"', p, true);
}

/** A path without typed columns, read from the payload on every row. */
function extractedCandidate(path: string[], params: SqlParams): Candidate {
  const pointer = jsonPointer(path);
  const string = () => extractedString(pointer, params);
  return {
    path,
    sql: lazyForms({
      string,
      number: () => numericForm(string()),
      array: () => {
        const p = params.text(pointer);
        return `CASE WHEN json_type("json", ${p}) = 'ARRAY' THEN json_transform(json_extract("json", ${p}), '["VARCHAR"]') END`;
      },
    }),
  };
}

/**
 * Resolves a dotted field name of a collection (`undefined`: a collection with no events). Each
 * event's value is that of the first path spelling the field (fewer keys first, then longer
 * keys from the left) at which the event holds a value, so the answer for one event never
 * depends on the others. Paths up to {@link MAX_DEPTH} keys have typed columns; a deeper path
 * (split at every dot) and, in a collection past its typed keys, any untyped one are read from
 * the payload.
 */
export function fieldSql(
  catalog: Catalog,
  entry: CollectionEntry | undefined,
  field: string,
  params: SqlParams,
): FieldSql {
  if (!entry) return MISSING;
  const typed = catalog.fields(entry, field);
  // Past its typed keys, a segment without a key's column may still hold the key in payloads.
  const perRow = entry.overflow && entry.segments.length > 1;
  const candidates = typed.map((key) =>
    perRow || readFromPayload(key)
      ? extractedCandidate(key.path, params)
      : typedCandidate(key, params),
  );
  const split = field.split('.');
  const untyped: string[][] = [];
  if (split.length > MAX_DEPTH) untyped.push(split);
  else if (entry.overflow) {
    for (const path of split.length > 1 ? [[field], split] : [split]) {
      if (
        !typed.some((k) => k.path.length === path.length && k.path.every((s, i) => s === path[i]))
      )
        untyped.push(path);
    }
  }
  for (const path of untyped) candidates.push(extractedCandidate(path, params));
  candidates.sort((a, b) => comparePaths(a.path, b.path));
  return firstHeld(candidates.map((c) => c.sql));
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

/** Field resolver bound to a query's collection and a statement's parameters. */
export function fields(ctx: QueryContext, params: SqlParams): (name: string) => FieldSql {
  const cache = new Map<string, FieldSql>();
  return (name) => {
    let f = cache.get(name);
    if (!f) {
      f = fieldSql(ctx.db.catalog, ctx.entry, name, params);
      cache.set(name, f);
    }
    return f;
  };
}

/** The metric's numeric expression, or null when the aggregation needs none or it is missing. */
export function metricSql(ctx: QueryContext, params: SqlParams): string | null {
  if (ctx.query.aggregation === 'Count' || !ctx.query.metric) return null;
  return fields(ctx, params)(ctx.query.metric).number;
}
