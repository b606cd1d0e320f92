import type { DuckDBConnection } from '@duckdb/node-api';
import {
  type CollectionEntry,
  ENGINE_SCHEMA,
  type KeyColumns,
  keyColumn,
  MAX_TYPED_KEYS,
} from '../storage/catalog.ts';
import { fieldName, jsonPointer } from '../storage/key-path.ts';
import { runPrepared } from '../storage/prepared-statements.ts';
import { SqlParams } from '../storage/sql-params.ts';
import type { SeenKey } from './discover-keys.ts';

export { discoverObjectKeys, MAX_DEPTH, type SeenKey } from './discover-keys.ts';

/**
 * Typed columns for the keys a collection actually holds. Discovery walks every payload object
 * (exactly, not a sample); new keys and new kinds of value add columns inside the writing
 * transaction, and the typed insert fills them from the payload text with DuckDB's own JSON
 * functions, the same ones SQL-mode users see.
 */

/**
 * The columns a key's kinds ask for. Every value has a string form, numbers included, so that a
 * number's text never depends on which other values the key has held. Objects are not values
 * (their keys are the fields), so a key that only ever held objects has no column.
 */
function columnsFor(seen: SeenKey) {
  const k = seen.kinds;
  return {
    hasString:
      k.has('string') ||
      k.has('numeric string') ||
      k.has('number') ||
      k.has('boolean') ||
      k.has('array'),
    hasNumber: k.has('number') || k.has('numeric string'),
    hasArray: k.has('array'),
  };
}

/** The kinds of column `seen` needs that `key` (the key's columns so far, if any) lacks. */
function missingColumns(
  key: KeyColumns | undefined,
  seen: SeenKey,
): Array<['s' | 'n' | 'a', string]> {
  const kinds = columnsFor(seen);
  const missing: Array<['s' | 'n' | 'a', string]> = [];
  if (kinds.hasString && !key?.hasString) missing.push(['s', 'VARCHAR']);
  if (kinds.hasNumber && !key?.hasNumber) missing.push(['n', 'DOUBLE']);
  if (kinds.hasArray && !key?.hasArray) missing.push(['a', 'VARCHAR[]']);
  return missing;
}

/**
 * Whether {@link addKeyColumns} would change `entry` for the discovered keys: a column or
 * catalog row to add, or the collection to mark as past {@link MAX_TYPED_KEYS}. Pure, so that a
 * writer can tell before it takes the schema lock.
 */
export function needsKeyColumns(entry: CollectionEntry, discovered: SeenKey[]): boolean {
  const byPath = new Map(entry.keys.map((k) => [JSON.stringify(k.path), k]));
  for (const seen of discovered) {
    const key = byPath.get(JSON.stringify(seen.path));
    if (missingColumns(key, seen).length === 0) continue;
    if (key || entry.keys.length < MAX_TYPED_KEYS || !entry.overflow) return true;
  }
  return false;
}

/**
 * Adds the columns and catalog rows that the discovered keys need to `draft`, inside the
 * caller's transaction. Returns whether anything changed.
 */
export async function addKeyColumns(
  conn: DuckDBConnection,
  draft: CollectionEntry,
  discovered: SeenKey[],
): Promise<boolean> {
  const byPath = new Map(draft.keys.map((k) => [JSON.stringify(k.path), k]));
  let nextId = draft.keys.reduce((max, k) => Math.max(max, k.id + 1), 0);
  let changed = false;
  for (const seen of discovered) {
    const pathJson = JSON.stringify(seen.path);
    let key = byPath.get(pathJson);
    const added = missingColumns(key, seen);
    if (added.length === 0) continue;
    const isNew = !key;
    if (!key) {
      if (draft.keys.length >= MAX_TYPED_KEYS) {
        if (!draft.overflow) {
          draft.overflow = true;
          await conn.run(`UPDATE ${ENGINE_SCHEMA}.collections SET overflow = true WHERE id = $1`, [
            draft.id,
          ]);
          changed = true;
        }
        continue;
      }
      key = {
        id: nextId++,
        path: seen.path,
        field: fieldName(seen.path),
        hasString: false,
        hasNumber: false,
        hasArray: false,
      };
      draft.keys.push(key);
      byPath.set(pathJson, key);
    }
    for (const [kind, type] of added) {
      if (kind === 's') key.hasString = true;
      if (kind === 'n') key.hasNumber = true;
      if (kind === 'a') key.hasArray = true;
      await conn.run(`ALTER TABLE ${draft.table} ADD COLUMN ${keyColumn(key, kind)} ${type}`);
    }
    const values = [draft.id, key.id, pathJson, key.hasString, key.hasNumber, key.hasArray];
    if (isNew) {
      await conn.run(`INSERT INTO ${ENGINE_SCHEMA}.keys VALUES ($1, $2, $3, $4, $5, $6)`, values);
    } else {
      await conn.run(
        `UPDATE ${ENGINE_SCHEMA}.keys SET path = $3, has_string = $4, has_number = $5, has_array = $6
         WHERE collection_id = $1 AND key_id = $2`,
        values,
      );
    }
    changed = true;
  }
  return changed;
}

/**
 * Appends events to the collection's table, filling the typed columns of the keys the batch
 * holds (`present`, its key discovery) from one multi-path extraction per payload. Keys the
 * batch does not hold are left NULL without being looked for, so the extraction does not grow
 * with the keys the collection has seen before. `source` gives the `(ts, payload)`
 * relation to read, adding its own parameters. Returns the number of rows written.
 */
export async function insertEvents(
  conn: DuckDBConnection,
  entry: CollectionEntry,
  present: readonly SeenKey[],
  source: (params: SqlParams) => string,
): Promise<number> {
  const held = new Set(present.map((k) => JSON.stringify(k.path)));
  const keys = entry.keys.filter((k) => held.has(JSON.stringify(k.path)));
  const columns = ['"timestamp"', '"json"'];
  const values = ['ts', 'payload'];
  const params = new SqlParams();
  const scalarKeys = keys.filter((k) => k.hasString || k.hasNumber);
  const arrayKeys = keys.filter((k) => k.hasArray);
  scalarKeys.forEach((key, i) => {
    const e = `e[${i + 1}]`;
    if (key.hasString) {
      columns.push(keyColumn(key, 's'));
      values.push(
        storedStringForm(e, 'payload', params.text(jsonPointer(key.path)), key.hasNumber),
      );
    }
    if (key.hasNumber) {
      columns.push(keyColumn(key, 'n'));
      values.push(numericForm(e));
    }
  });
  arrayKeys.forEach((key, i) => {
    const j = `j[${i + 1}]`;
    columns.push(keyColumn(key, 'a'));
    values.push(
      `CASE WHEN left(CAST(${j} AS VARCHAR), 1) = '[' THEN json_transform(${j}, '["VARCHAR"]') END`,
    );
  });
  const from = source(params);
  const e = scalarKeys.length
    ? `json_extract_string(payload, ${params.texts(scalarKeys.map((k) => jsonPointer(k.path)))})`
    : 'NULL';
  const j = arrayKeys.length
    ? `json_extract(payload, ${params.texts(arrayKeys.map((k) => jsonPointer(k.path)))})`
    : 'NULL';
  const result = await runPrepared(
    conn,
    `INSERT INTO ${entry.table} (${columns.join(', ')})
     SELECT ${values.join(', ')} FROM (
       SELECT ts, payload, ${e} AS e, ${j} AS j FROM ${from}
     )`,
    params,
  );
  return Number(result.rowsChanged);
}

/**
 * The string form to store of the value that DuckDB's `json_extract_string` read as `e` at
 * `pointer` of `payload`: NULL for an object (not a value), and for a number its JSON text as
 * JavaScript writes it, which DuckDB's reader gives except for the `+` of a positive exponent.
 * Only values that could be either are looked at again in the payload.
 */
export function storedStringForm(
  e: string,
  payload: string,
  pointer: string,
  mayBeNumber: boolean,
): string {
  const object = `WHEN starts_with(${e}, '{') AND json_type(${payload}, ${pointer}) = 'OBJECT' THEN NULL`;
  const exponent = mayBeNumber
    ? ` WHEN contains(${e}, 'e') AND regexp_full_match(${e}, '-?[0-9]+(\\.[0-9]+)?e[0-9]+') AND json_type(${payload}, ${pointer}) <> 'VARCHAR' THEN replace(${e}, 'e', 'e+')`
    : '';
  return `CASE ${object}${exponent} ELSE ${e} END`;
}

/**
 * The numeric form of a string form: DuckDB's own reading of it as a finite DOUBLE, else NULL.
 * Booleans, arrays and words have none; `"42"` and `42` both have 42. Filter values get the
 * same treatment at query time, so the two sides always agree.
 */
export function numericForm(stringForm: string): string {
  return `CASE WHEN isfinite(TRY_CAST(${stringForm} AS DOUBLE)) THEN TRY_CAST(${stringForm} AS DOUBLE) END`;
}

/** Re-export for callers that only need the key type. */
export type { KeyColumns };
