import type { SqlParams } from '../storage/sql-params.ts';

/**
 * Getting events into DuckDB: the text of a whole batch travels as ONE bound VARCHAR and DuckDB
 * splits and parses it, which is an order of magnitude faster than handing values over one by
 * one, and keeps every payload byte-for-byte.
 */

/** The largest Unix second accepted (9999-12-31T23:59:59Z), as the protocol's time values. */
export const MAX_TIMESTAMP = 253_402_300_799;

/**
 * An event ready to write: Unix seconds (whole), the payload text of a JSON object, and that
 * object when the caller already holds it (key discovery then needs no second parse).
 */
export interface EventRecord {
  timestamp: number;
  payload: string;
  json?: Record<string, unknown>;
}

// Record and field separators: control characters that valid JSON text never contains raw.
const RS = '\u001e';
const US = '\u001f';

/**
 * The SQL relation `(ts, payload)` of already-validated events, as the HTTP endpoints and the
 * demo generator produce them: one bound VARCHAR of records split by DuckDB.
 */
export function recordsRelation(records: EventRecord[], params: SqlParams): string {
  const text = records.map((r) => `${r.timestamp}${US}${r.payload}`).join(RS);
  return `(SELECT CAST(split_part(r, chr(31), 1) AS BIGINT) AS ts,
            substr(r, strpos(r, chr(31)) + 1) AS payload
     FROM (SELECT unnest(string_split(${params.text(text)}, chr(30))) AS r))`;
}
