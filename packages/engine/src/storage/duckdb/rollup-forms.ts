import type { EventRecord } from '../ingest-batch.ts';
import type { RollupLedger } from './rollups.ts';

/**
 * The rows `returningSql` (`rollups.ts`) reads back from an insert, computed in JavaScript
 * before it: per record, its timestamp, each rolled-up key's string form and each summed
 * metric's numeric form. A payload whose text is what `JSON.stringify` writes holds every
 * number as its shortest text, which is also what DuckDB's JSON reader writes back (with the `+`
 * of a positive exponent that the stored form adds), so a top-level value's string form is its
 * string, `String(number)` or `true`/`false`, and a number's numeric form is the number itself.
 *
 * Answers `undefined` where JavaScript is not sure of DuckDB's forms for some record (a payload
 * in another spelling, an array, a string that may read as a number): the insert then reads
 * the rows back with `RETURNING`, as DuckDB's own SQL computes them.
 */
export function rollupRowsOf(
  ledger: RollupLedger,
  records: readonly EventRecord[],
): unknown[][] | undefined {
  const rows: unknown[][] = [];
  for (const record of records) {
    const json = canonicalObject(record);
    if (json === undefined) return undefined;
    const row: unknown[] = [record.timestamp];
    for (const key of ledger.keys) {
      if (!key.written) {
        row.push(null);
        continue;
      }
      const form = stringForm(Object.hasOwn(json, key.name) ? json[key.name] : undefined);
      if (form === undefined) return undefined;
      row.push(form);
    }
    for (const name of ledger.sums) {
      const form = numericForm(Object.hasOwn(json, name) ? json[name] : undefined);
      if (form === undefined) return undefined;
      row.push(form);
    }
    rows.push(row);
  }
  return rows;
}

/** The record's payload as an object, where its text is exactly what JSON.stringify writes. */
function canonicalObject(record: EventRecord): Record<string, unknown> | undefined {
  const value = JSON.parse(record.payload) as unknown;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  if (!record.canonical && JSON.stringify(value) !== record.payload) return undefined;
  return value as Record<string, unknown>;
}

/** A top-level value's string form, null where it has none, `undefined` where unsure. */
function stringForm(value: unknown): string | null | undefined {
  switch (typeof value) {
    case 'undefined':
      return null;
    case 'string':
      // Payload checks refused half surrogate pairs, the one text DuckDB reads otherwise.
      return value;
    case 'number':
      return Number.isFinite(value) ? String(value) : undefined;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      // An object has no string form; an array's is its JSON text as DuckDB writes it.
      return value === null || !Array.isArray(value) ? null : undefined;
    default:
      return undefined;
  }
}

/**
 * Text the numeric form might read as a number (`NUMERIC_TEXT` of `key-typing.ts`, with any
 * white space around): such strings are left to DuckDB's cast.
 */
const MAYBE_NUMERIC = /^\s*[+-]?(\d|\.\d)/;

/** A top-level value's numeric form, null where it has none, `undefined` where unsure. */
function numericForm(value: unknown): number | null | undefined {
  switch (typeof value) {
    case 'number':
      // The text holds the shortest digits of `value`, which read back as `value`.
      return Number.isFinite(value) ? value + 0 : undefined;
    case 'string':
      return MAYBE_NUMERIC.test(value) ? undefined : null;
    case 'boolean':
    case 'undefined':
      return null;
    case 'object':
      // Objects and arrays have no numeric form: an array's string form starts with `[`.
      return null;
    default:
      return undefined;
  }
}
