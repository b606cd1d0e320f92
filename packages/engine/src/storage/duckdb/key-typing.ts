import type { DuckDBConnection } from '@duckdb/node-api';
import type { EventRecord } from '../ingest-batch.ts';
import { JSON_TOKENS } from '../json-tokens.ts';
import { fieldName, jsonPointer } from '../key-path.ts';
import type { SeenKey } from '../seen-key.ts';
import {
  type CollectionEntry,
  columnName,
  ENGINE_SCHEMA,
  type KeyColumns,
  keyColumn,
  type Segment,
  segmentTable,
} from './catalog.ts';
import { readPrepared, runPrepared } from './prepared-statements.ts';
import { forEachRollupRow } from './rollup-forms.ts';
import { addSpanRows, type RollupLedger, returningSql, SpanRows, settleDrops } from './rollups.ts';
import { SqlParams } from './sql-params.ts';
import type { WriteTransaction } from './workspace-db.ts';

/**
 * DuckDB's key typing: typed columns for the keys a collection actually holds. Discovery walks every payload object
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

type Kind = 's' | 'n' | 'a';

const pathMaps = new WeakMap<CollectionEntry, { count: number; byPath: Map<string, KeyColumns> }>();

/**
 * The entry's keys by path, kept per entry: built anew for each batch it would cost time in
 * proportion to every key the collection has seen. Keys are only ever added, so the count tells
 * whether a draft grew since.
 */
function keysByPath(entry: CollectionEntry): Map<string, KeyColumns> {
  let cached = pathMaps.get(entry);
  if (!cached || cached.count !== entry.keys.length) {
    cached = {
      count: entry.keys.length,
      byPath: new Map(entry.keys.map((k) => [JSON.stringify(k.path), k])),
    };
    pathMaps.set(entry, cached);
  }
  return cached.byPath;
}
/**
 * New typed keys one write adds at most; more new keys in one batch are read from the payloads,
 * so that no batch, however many distinct keys its events hold, adds columns without bound.
 */
export const MAX_NEW_TYPED_KEYS = 256;

/**
 * Keys a collection reads from its payloads that the catalog lists one by one; past this, the
 * collection reads every key without columns from the payloads (its `overflow`), so that the
 * catalog a write copies and publishes stays bounded too.
 */
export const MAX_UNTYPED_KEYS = 20_000;

/** A new catalog key, with no columns yet. */
function untypedKey(id: number, path: string[]): KeyColumns {
  return { id, path, field: fieldName(path), hasString: false, hasNumber: false, hasArray: false };
}

/** Whether a catalog key has no columns: a key only wide events held, read from the payloads. */
export function readFromPayload(key: KeyColumns): boolean {
  return !key.hasString && !key.hasNumber && !key.hasArray;
}

const KIND_TYPES: Record<Kind, string> = { s: 'VARCHAR', n: 'DOUBLE', a: 'VARCHAR[]' };

/** The kinds of column a batch's values of one key ask for. */
function kindsFor(seen: SeenKey): Kind[] {
  const c = columnsFor(seen);
  return [
    ...(c.hasString ? ['s' as const] : []),
    ...(c.hasNumber ? ['n' as const] : []),
    ...(c.hasArray ? ['a' as const] : []),
  ];
}

/**
 * A segment may hold this many typed columns beyond twice those a batch needs before the batch
 * starts a new segment: appends pay for every column, so a batch should not carry many that
 * only other batches use.
 */
const SEGMENT_SPARE = 48;

/**
 * Whether {@link addKeyColumns} would change `entry` for the discovered keys: a column of the
 * last segment, a catalog row or a segment to add. Pure, so that a writer can tell before it
 * takes the schema lock.
 */
export function needsKeyColumns(entry: CollectionEntry, discovered: SeenKey[]): boolean {
  const byPath = keysByPath(entry);
  const last = entry.segments[entry.segments.length - 1];
  for (const seen of discovered) {
    const kinds = kindsFor(seen);
    if (kinds.length === 0) continue;
    const key = byPath.get(JSON.stringify(seen.path));
    // A collection past its typed-key limit (or that of earlier versions) reads new keys from
    // the payloads, as it always did for them.
    if (!key && entry.overflow) continue;
    if (!key || !last) return true;
    if (readFromPayload(key)) continue;
    if (kinds.some((kind) => !last.columns.has(columnName(key, kind)))) return true;
  }
  return false;
}

/**
 * Adds what the discovered keys need to `draft`, inside the caller's transaction: catalog rows
 * for new keys, and their columns in the last segment, or a new segment holding just the
 * batch's columns when the last one would grow far wider than the batch needs (or the batch
 * brings many new columns at once). Returns whether anything changed.
 */
export async function addKeyColumns(
  tx: WriteTransaction,
  draft: CollectionEntry,
  discovered: SeenKey[],
): Promise<boolean> {
  const { conn } = tx;
  const byPath = new Map(draft.keys.map((k) => [JSON.stringify(k.path), k]));
  let nextId = draft.keys.reduce((max, k) => Math.max(max, k.id + 1), 0);
  let changed = false;
  const needed: Array<[KeyColumns, Kind]> = [];
  const newKeys: KeyColumns[] = [];
  const untyped: SeenKey[] = [];
  let typedNew = 0;
  for (const seen of discovered) {
    const kinds = kindsFor(seen);
    if (kinds.length === 0) continue;
    const pathJson = JSON.stringify(seen.path);
    let key = byPath.get(pathJson);
    if (!key && draft.overflow) continue;
    // Once read from the payloads, always: its earlier rows have no columns to fill.
    if (key && readFromPayload(key)) continue;
    if (!key && (seen.wideOnly || typedNew >= MAX_NEW_TYPED_KEYS)) {
      untyped.push(seen);
      continue;
    }
    const isNew = !key;
    if (!key) {
      typedNew++;
      key = untypedKey(nextId++, seen.path);
      draft.keys.push(key);
      byPath.set(pathJson, key);
      newKeys.push(key);
    }
    const before = [key.hasString, key.hasNumber, key.hasArray].join();
    for (const kind of kinds) {
      needed.push([key, kind]);
      if (kind === 's') key.hasString = true;
      if (kind === 'n') key.hasNumber = true;
      if (kind === 'a') key.hasArray = true;
    }
    const values = [draft.id, key.id, pathJson, key.hasString, key.hasNumber, key.hasArray];
    if (isNew) changed = true;
    else if (before !== [key.hasString, key.hasNumber, key.hasArray].join()) {
      await conn.run(
        `UPDATE ${ENGINE_SCHEMA}.keys SET path = $3, has_string = $4, has_number = $5, has_array = $6
         WHERE collection_id = $1 AND key_id = $2`,
        values,
      );
      changed = true;
    }
  }
  if (untyped.length > 0) {
    const held = draft.keys.filter(readFromPayload).length;
    if (held + untyped.length > MAX_UNTYPED_KEYS) {
      // Past the bound, every key without columns is read from the payloads.
      await conn.run(`UPDATE ${ENGINE_SCHEMA}.collections SET overflow = true WHERE id = $1`, [
        draft.id,
      ]);
      draft.overflow = true;
    } else {
      for (const seen of untyped) {
        const key = untypedKey(nextId++, seen.path);
        draft.keys.push(key);
        newKeys.push(key);
      }
    }
    changed = true;
  }
  await insertKeyRows(conn, draft.id, newKeys);
  const last = draft.segments[draft.segments.length - 1] as Segment;
  const missing = needed.filter(([key, kind]) => !last.columns.has(columnName(key, kind)));
  if (missing.length === 0) return changed;
  // Many columns at once are one CREATE TABLE rather than an ALTER each.
  const fits = last.columns.size + missing.length <= 2 * needed.length + SEGMENT_SPARE;
  if (fits && missing.length <= SEGMENT_SPARE) {
    for (const [key, kind] of missing) {
      await conn.run(
        `ALTER TABLE ${last.table} ADD COLUMN ${keyColumn(key, kind)} ${KIND_TYPES[kind]}`,
      );
      last.columns.add(columnName(key, kind));
    }
    return true;
  }
  const segment: Segment = {
    table: segmentTable(draft.id, draft.segments.length),
    columns: new Set(needed.map(([key, kind]) => columnName(key, kind))),
  };
  const columns = needed.map(([key, kind]) => `, ${keyColumn(key, kind)} ${KIND_TYPES[kind]}`);
  await conn.run(
    `CREATE TABLE ${segment.table} ("timestamp" BIGINT NOT NULL, "json" ${tx.payloadType} NOT NULL${columns.join('')})`,
  );
  draft.segments.push(segment);
  await conn.run(
    `CREATE OR REPLACE VIEW ${draft.view} AS ${draft.segments.map((s) => `SELECT "timestamp", "json" FROM ${s.table}`).join(' UNION ALL ')}`,
  );
  return true;
}

/** Catalog rows for new keys in one statement: a wide batch brings hundreds at once. */
async function insertKeyRows(conn: DuckDBConnection, collectionId: number, keys: KeyColumns[]) {
  if (keys.length === 0) return;
  const params = new SqlParams();
  const id = params.integer(collectionId);
  const rows = params.text(
    JSON.stringify(
      keys.map((k) => ({
        id: k.id,
        path: JSON.stringify(k.path),
        s: k.hasString,
        n: k.hasNumber,
        a: k.hasArray,
      })),
    ),
  );
  const shape = `'[{"id":"INTEGER","path":"VARCHAR","s":"BOOLEAN","n":"BOOLEAN","a":"BOOLEAN"}]'`;
  await conn.run(
    `INSERT INTO ${ENGINE_SCHEMA}.keys
     SELECT ${id}, r.id, r.path, r.s, r.n, r.a FROM (SELECT unnest(from_json(${rows}, ${shape})) AS r)`,
    params.values,
    params.types,
  );
}

/**
 * An insert whose rows are sorted on the way in: the source also yields `ord`, each event's
 * place in ingest order, and the rows go in ordered by `key`'s stored text (missing last),
 * `timestamp`, then `ord`, by `timestamp` and `ord` with `time`, or by `ord` alone without a
 * key; `ord` is also written to the column `seq` when named.
 */
export interface OrderedInsert {
  key: KeyColumns | null;
  /** The quoted column to write `ord` to, or none. */
  seq?: string;
  /** Ordered by `timestamp`, then `ord`, whatever the key (see `cluster-rows.ts`). */
  time?: boolean;
}

/**
 * Appends events to the collection's table, filling the typed columns of the keys the batch
 * holds (`present`, its key discovery) from one multi-path extraction per payload. Keys the
 * batch does not hold are left NULL without being looked for, so the extraction does not grow
 * with the keys the collection has seen before. `source` gives the `(ts, payload)`
 * relation to read, adding its own parameters. Returns the number of rows written. `into` is
 * another table with the last segment's columns to append to instead (the load's key sample).
 * `records`, the source's events when the caller holds them, let the rollups (when kept) be
 * added up in JavaScript while the insert runs (`rollup-forms.ts`; DuckDB reads the forms
 * JavaScript is not sure of from the source again); without them the insert reads its rows back.
 * `ordered` sorts the rows on the way in (see {@link OrderedInsert}).
 */
export async function insertEvents(
  conn: DuckDBConnection,
  entry: CollectionEntry,
  present: readonly SeenKey[],
  source: (params: SqlParams) => string,
  into?: string,
  records?: readonly EventRecord[],
  ordered?: OrderedInsert,
): Promise<number> {
  const segment = entry.segments[entry.segments.length - 1] as Segment;
  const has = (key: KeyColumns, kind: Kind) => segment.columns.has(columnName(key, kind));
  const byPath = keysByPath(entry);
  const keys: KeyColumns[] = [];
  for (const seen of present) {
    const key = byPath.get(JSON.stringify(seen.path));
    if (key) keys.push(key);
  }
  const columns = ['"timestamp"', '"json"'];
  const values = ['ts', 'payload'];
  const params = new SqlParams();
  const scalarKeys = keys.filter((k) => has(k, 's') || has(k, 'n'));
  const arrayKeys = keys.filter((k) => has(k, 'a'));
  scalarKeys.forEach((key, i) => {
    const e = `e[${i + 1}]`;
    if (has(key, 's')) {
      columns.push(keyColumn(key, 's'));
      values.push(
        storedStringForm(
          e,
          'payload',
          params.text(jsonPointer(key.path)),
          key.hasNumber,
          key.hasArray,
        ),
      );
    }
    if (has(key, 'n')) {
      columns.push(keyColumn(key, 'n'));
      values.push(numericForm(e));
    }
  });
  arrayKeys.forEach((key, i) => {
    const j = `j[${i + 1}]`;
    columns.push(keyColumn(key, 'a'));
    values.push(`CASE WHEN left(CAST(${j} AS VARCHAR), 1) = '[' THEN ${arrayElementForms(j)} END`);
  });
  const from = source(params);
  const e = scalarKeys.length
    ? `json_extract_string(payload, ${params.texts(scalarKeys.map((k) => jsonPointer(k.path)))})`
    : 'NULL';
  const j = arrayKeys.length
    ? `json_extract(payload, ${params.texts(arrayKeys.map((k) => jsonPointer(k.path)))})`
    : 'NULL';
  const rows = `SELECT ts, payload, ${e} AS e, ${j} AS j${ordered ? ', ord' : ''} FROM ${from}`;
  let sql = `INSERT INTO ${into ?? segment.table} (${columns.join(', ')})
     SELECT ${values.join(', ')} FROM (${rows})`;
  if (ordered) {
    // The key's stored text (missing last), time, then ingest order, carried in `seq`.
    const named = values.map((v, i) => `${v} AS c${i}`);
    const keyAt = ordered.key ? columns.indexOf(keyColumn(ordered.key, 's')) : -1;
    // Without a key the rows keep ingest order: time order within it is the data's own.
    const order = ordered.time
      ? ['c0', 'ord']
      : keyAt >= 0
        ? [`c${keyAt} NULLS LAST`, 'c0', 'ord']
        : ['ord'];
    const seq = ordered.seq ? `, ${ordered.seq}` : '';
    sql = `INSERT INTO ${into ?? segment.table} (${columns.join(', ')}${seq})
     SELECT ${values.map((_, i) => `c${i}`).join(', ')}${ordered.seq ? ', ord' : ''} FROM (
       SELECT ${named.join(', ')}, ord FROM (${rows}) ORDER BY ${order.join(', ')}
     )`;
  }
  // Rows into another table (the load's key sample) are not the collection's: rollups skip them.
  if (entry.rollup && into === undefined) {
    const ledger = entry.rollup;
    await settleDrops(conn, ledger);
    if (!records) {
      // Keys and metrics are read from the inserted rows' payloads, as the rollups keep them.
      const inserted = await readPrepared(conn, `${sql} RETURNING ${returningSql(entry)}`, params);
      await addSpanRows(conn, entry, spanRowsOf(ledger, inserted));
      return inserted.length;
    }
    // The events are inserted while JavaScript adds their rollup rows up, which then wait for
    // the insert instead of holding it back.
    const inserting = runPrepared(conn, sql, params);
    // Handled at once: an insert failing during the turn below is no unhandled rejection.
    inserting.catch(() => undefined);
    let spans: SpanRows | undefined;
    try {
      // One turn of the event loop: the insert is bound and handed to DuckDB in microtasks.
      await new Promise((resolve) => setImmediate(resolve));
      spans = rollupSpanRows(ledger, records);
    } finally {
      // Settled before anything else runs on the connection, whatever JavaScript threw.
      await inserting;
    }
    const result = await inserting;
    if (!spans) {
      // DuckDB's own forms, read from the same events as the insert read (payloads are stored
      // as sent), where JavaScript is not sure of them.
      const again = new SqlParams();
      const rows = await readPrepared(
        conn,
        `SELECT ${returningSql(entry)} FROM (SELECT ts AS "timestamp", payload AS "json" FROM ${source(again)})`,
        again,
      );
      spans = spanRowsOf(ledger, rows);
    }
    await addSpanRows(conn, entry, spans);
    return Number(result.rowsChanged);
  }
  const result = await runPrepared(conn, sql, params);
  return Number(result.rowsChanged);
}

/** The rollup rows of `rows` (as {@link returningSql} reads them), added up. */
function spanRowsOf(ledger: RollupLedger, rows: ReadonlyArray<readonly unknown[]>): SpanRows {
  const spans = new SpanRows(ledger);
  for (const row of rows) spans.add(row);
  return spans;
}

/**
 * The rollup rows of `records` added up by JavaScript, or undefined where it is not sure of some
 * record's forms (`rollup-forms.ts`).
 */
function rollupSpanRows(
  ledger: RollupLedger,
  records: readonly EventRecord[],
): SpanRows | undefined {
  const spans = new SpanRows(ledger);
  if (ledger.keyed)
    return forEachRollupRow(ledger, records, (r) => spans.add(r)) ? spans : undefined;
  const row = [0];
  for (const r of records) {
    row[0] = r.timestamp;
    spans.add(row);
  }
  return spans;
}

/**
 * The string form to store of the value that DuckDB's `json_extract_string` read as `e` at
 * `pointer` of `payload`: NULL for an object (not a value), and for a number or an array its
 * JSON text as JavaScript writes it, which DuckDB's reader gives except for the `+` of a
 * positive exponent (added outside the array's strings, see {@link JSON_TOKENS}). Only values
 * that could be either are looked at again in the payload.
 */
export function storedStringForm(
  e: string,
  payload: string,
  pointer: string,
  mayBeNumber: boolean,
  mayBeArray = mayBeNumber,
): string {
  const object = `WHEN starts_with(${e}, '{') AND json_type(${payload}, ${pointer}) = 'OBJECT' THEN NULL`;
  const exponent = mayBeNumber
    ? ` WHEN contains(${e}, 'e') AND regexp_full_match(${e}, '-?[0-9]+(\\.[0-9]+)?e[0-9]+') AND json_type(${payload}, ${pointer}) <> 'VARCHAR' THEN replace(${e}, 'e', 'e+')`
    : '';
  const array = mayBeArray
    ? ` WHEN starts_with(${e}, '[') AND regexp_matches(${e}, 'e[0-9]') AND json_type(${payload}, ${pointer}) = 'ARRAY' THEN ${exponentSigns(e)}`
    : '';
  return `CASE ${object}${exponent}${array} ELSE ${e} END`;
}

/** JSON text with a `+` in each positive exponent outside its strings (`[1e21,"1e5"]`). */
function exponentSigns(text: string): string {
  return `array_to_string(list_transform(regexp_extract_all(${text}, '${JSON_TOKENS}'), lambda t: CASE WHEN starts_with(t, '"') THEN t ELSE regexp_replace(t, 'e([0-9])', 'e+\\1', 'g') END), '')`;
}

/**
 * The string forms of the elements of the JSON array `j` (as the string form of each element
 * alone: objects and nulls have none).
 */
export function arrayElementForms(j: string): string {
  const element = `CASE json_type(x) WHEN 'VARCHAR' THEN json_extract_string(x, '$') WHEN 'OBJECT' THEN NULL WHEN 'NULL' THEN NULL ELSE CASE WHEN regexp_matches(CAST(x AS VARCHAR), 'e[0-9]') THEN ${exponentSigns('CAST(x AS VARCHAR)')} ELSE CAST(x AS VARCHAR) END END`;
  return `list_transform(json_transform(${j}, '["JSON"]'), lambda x: ${element})`;
}

/**
 * A decimal number in text, whole, as the numeric form reads strings (RE2, as ClickHouse's
 * `NUMERIC_TEXT`): DuckDB's cast alone would also read `1_000`, which no other reader does.
 */
const NUMERIC_TEXT = String.raw`^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$`;

/**
 * The numeric form of a string form: a decimal number (sign, exponent and surrounding white
 * space allowed) read as the nearest DOUBLE where that is finite, else NULL. Booleans, arrays
 * and words have none; `"42"` and `42` both have 42. Filter values get the same treatment at
 * query time, so the two sides always agree.
 *
 * The string form is named once, and the cast once: an insert names them for every typed key,
 * and each further mention made an insert of 2,000 keys several times slower. What the pattern
 * does not pass is '', which casts to NULL; a cast past the largest double is infinite, which
 * the filter drops.
 */
export function numericForm(stringForm: string): string {
  const cast = `TRY_CAST(regexp_extract(${stringForm}, '${NUMERIC_TEXT}') AS DOUBLE)`;
  return `list_filter([${cast}], lambda v: isfinite(v))[1]`;
}

/** Re-export for callers that only need the key type. */
export type { KeyColumns };
