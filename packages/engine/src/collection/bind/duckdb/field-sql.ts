import { VARCHAR } from '../../../storage/duckdb/duckdb-api.ts';
import {
  arrayElementForms,
  numericForm,
  storedStringForm,
} from '../../../storage/duckdb/key-typing.ts';
import type { NamedParams } from '../../../storage/duckdb/sql-params.ts';
import { jsonPointer } from '../../../storage/key-path.ts';
import type { DuckDbField, DuckDbSpelling } from './bind-duckdb-query.ts';

/**
 * The SQL expressions that read one field of the events, or null where no event can have that
 * form: `string` (the string form: strings, booleans, numbers, arrays as JSON text), `number`
 * (the numeric form: numbers and numeric-looking strings) and `array` (element string forms).
 * Typed keys read their columns; paths bound to the payload are extracted with the same
 * semantics; a field with no spelling is missing from every event. A typed key's `string` reads
 * the payload too (see `stored`), so it is written only for a field whose string form the
 * query reads (its split, `includes` and `excludes`) and is null elsewhere.
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

const MISSING: FieldSql = { string: null, number: null, array: null, stored: null };

/**
 * Each field's forms, written once for the whole query: a JSON path a form reads becomes a
 * named parameter of `params` (run binds only those a statement uses, so a form can be written
 * here whether or not a renderer puts it into SQL).
 */
export function fieldsSql(
  fields: Iterable<DuckDbField>,
  textFields: readonly string[],
  params: NamedParams,
): Map<string, FieldSql> {
  const strings = new Set(textFields);
  const text = (value: string) => {
    const name = `f${Object.keys(params).length}`;
    params[name] = { value, type: VARCHAR };
    return `$${name}`;
  };
  const out = new Map<string, FieldSql>();
  for (const field of fields)
    out.set(
      field.name,
      firstHeld(
        field.spellings.map((s) =>
          s.from === 'columns'
            ? // Several spellings: the first held is found by its string form.
              typedForms(s, text, strings.has(field.name) || field.spellings.length > 1)
            : extractedForms(s.path, text),
        ),
      ),
    );
  return out;
}

/** A spelling read from its typed columns. */
function typedForms(
  spelling: Extract<DuckDbSpelling, { from: 'columns' }>,
  text: (value: string) => string,
  stringRead: boolean,
): FieldSql {
  const { string: s, number: n, array } = spelling;
  if (!stringRead) return { string: null, number: n, array, stored: s };
  // Files written before every number had a string form hold rows with n but no s: their text
  // comes from the payload, as the typed insert reads it now.
  const extracted = n ? extractedString(jsonPointer(spelling.path), text) : null;
  const string = n
    ? s
      ? `CASE WHEN ${s} IS NULL AND ${n} IS NOT NULL THEN ${extracted} ELSE ${s} END`
      : `CASE WHEN ${n} IS NOT NULL THEN ${extracted} END`
    : s;
  return { string, number: n, array, stored: s };
}

/** The string form of the value at `pointer`, read from the payload (as the typed insert does). */
function extractedString(pointer: string, text: (value: string) => string): string {
  const p = text(pointer);
  return storedStringForm(`json_extract_string("json", ${p})`, '"json"', p, true);
}

/** A path without typed columns, read from the payload on every row. */
function extractedForms(path: string[], text: (value: string) => string): FieldSql {
  const pointer = jsonPointer(path);
  const string = extractedString(pointer, text);
  const p = text(pointer);
  return {
    string,
    number: numericForm(string),
    array: `CASE WHEN json_type("json", ${p}) = 'ARRAY' THEN ${arrayElementForms(`json_extract("json", ${p})`)} END`,
    stored: string,
  };
}

/** Per row, the forms of the first candidate whose string form is there (every value has one). */
function firstHeld(candidates: FieldSql[]): FieldSql {
  const [only] = candidates;
  if (!only) return MISSING;
  if (candidates.length === 1) return only;
  const held = candidates.map((c) => c.string ?? 'NULL');
  const pick = (form: 'number' | 'array') => {
    if (candidates.every((c) => c[form] === null)) return null;
    const branches = candidates.map(
      (c, i) => `WHEN ${held[i]} IS NOT NULL THEN ${c[form] ?? 'NULL'}`,
    );
    return `CASE ${branches.join(' ')} END`;
  };
  const string = `coalesce(${held.join(', ')})`;
  return { string, number: pick('number'), array: pick('array'), stored: string };
}
