import { numericForm } from '../ingest/type-keys.ts';
import { type Catalog, type CollectionEntry, keyColumn } from '../storage/catalog.ts';
import { jsonPointer } from '../storage/key-path.ts';
import type { SqlParams } from '../storage/sql-params.ts';

/**
 * The SQL expressions that read one field of the events, or null where no event can have that
 * form: `string` (the string form: strings, booleans, numbers, arrays as JSON text), `number`
 * (the numeric form: numbers and numeric-looking strings) and `array` (element string forms).
 * Typed keys read their columns; keys of an overflowed collection fall back to JSON extraction
 * with the same semantics; any other field is missing from every event.
 */
export interface FieldSql {
  string: string | null;
  number: string | null;
  array: string | null;
}

const MISSING: FieldSql = { string: null, number: null, array: null };

/** The string form of a DOUBLE: integers without a fraction, like the JSON they came from. */
function numberText(n: string): string {
  return `CASE WHEN ${n} = trunc(${n}) AND abs(${n}) < 1e15 THEN CAST(CAST(${n} AS BIGINT) AS VARCHAR) ELSE CAST(${n} AS VARCHAR) END`;
}

/** Resolves a dotted field name of a collection (`undefined`: a collection with no events). */
export function fieldSql(
  catalog: Catalog,
  entry: CollectionEntry | undefined,
  field: string,
  params: SqlParams,
): FieldSql {
  if (!entry) return MISSING;
  const key = catalog.field(entry, field);
  if (key) {
    const s = key.hasString ? keyColumn(key, 's') : null;
    const n = key.hasNumber ? keyColumn(key, 'n') : null;
    // A key that held only numbers before its first string has rows with n but no s.
    const string = s && n ? `coalesce(${s}, ${numberText(n)})` : (s ?? (n ? numberText(n) : null));
    return { string, number: n, array: key.hasArray ? keyColumn(key, 'a') : null };
  }
  if (!entry.overflow) return MISSING;
  const pointer = params.text(jsonPointer(field.split('.')));
  const string = `json_extract_string("json", ${pointer})`;
  const json = `json_extract("json", ${pointer})`;
  return {
    string,
    number: numericForm(string),
    array: `CASE WHEN left(CAST(${json} AS VARCHAR), 1) = '[' THEN json_transform(${json}, '["VARCHAR"]') END`,
  };
}
