import { BIGINT, type DuckDBConnection, VARCHAR } from '@duckdb/node-api';
import type { SqlParams } from '../storage/sql-params.ts';

/**
 * Getting events into DuckDB: the text of a whole batch travels as ONE bound VARCHAR and DuckDB
 * splits and parses it, which is an order of magnitude faster than handing values over one by
 * one, and keeps every payload byte-for-byte. NDJSON lines are first checked into a
 * per-connection temporary table `stage(line_no, ts, payload, problem)`, so bad lines keep
 * their numbers; validated HTTP events go straight from the text to the insert.
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

/** The staged NDJSON lines that passed their checks, as a `(ts, payload)` relation. */
export const STAGED_GOOD = '(SELECT ts, payload FROM stage WHERE problem IS NULL)';

/**
 * Stages NDJSON lines `{"timestamp": <unix s>, "json": {…} | "<json text>"}` and checks each
 * one, so that bad lines carry their number and reason. `firstLine` is the number of the first
 * line in `text`. Blank lines are skipped. Object payloads are stored in DuckDB's compact form;
 * string payloads exactly as given.
 */
export async function stageNdjson(
  conn: DuckDBConnection,
  text: string,
  firstLine: number,
): Promise<void> {
  await conn.run(
    `CREATE OR REPLACE TEMP TABLE stage AS
     SELECT line_no,
            CASE WHEN problem IS NULL THEN floor(tsd)::BIGINT END AS ts,
            CASE WHEN problem IS NULL THEN payload END AS payload,
            problem
     FROM (
       SELECT line_no, tsd, payload,
         CASE
           WHEN t IS NULL THEN 'is not valid JSON'
           WHEN t.timestamp IS NULL AND t.json IS NULL AND json_type(line) <> 'OBJECT'
             THEN 'is not a JSON object'
           WHEN t.timestamp IS NULL THEN 'timestamp is required'
           WHEN tsd IS NULL OR NOT isfinite(tsd) OR tsd < 0 OR tsd > ${MAX_TIMESTAMP}
             THEN 'timestamp: expected Unix seconds (a number from 0 to ${MAX_TIMESTAMP})'
           WHEN t.json IS NULL THEN 'json is required'
           WHEN payload IS NULL THEN 'json: expected a JSON object, or a string holding one'
         END AS problem
       FROM (
         SELECT line_no, line, t,
           TRY_CAST(CASE WHEN left(CAST(t.timestamp AS VARCHAR), 1) = '"' THEN t.timestamp->>'$'
                         ELSE CAST(t.timestamp AS VARCHAR) END AS DOUBLE) AS tsd,
           CASE WHEN left(CAST(t.json AS VARCHAR), 1) = '{' THEN CAST(t.json AS VARCHAR)
                WHEN left(CAST(t.json AS VARCHAR), 1) = '"' AND try(json_type(t.json->>'$')) = 'OBJECT'
                  THEN t.json->>'$' END AS payload
         FROM (
           SELECT $2 + i - 1 AS line_no, line,
             try(json_transform(line, '{"timestamp":"JSON","json":"JSON"}')) AS t
           FROM (SELECT unnest(l) AS line, generate_subscripts(l, 1) AS i
                 FROM (SELECT string_split($1, chr(10)) AS l))
           WHERE line <> ''
         )
         -- Blank lines (only whitespace) are skipped, not reported; trim is costly, so it only
         -- runs on the lines that did not parse.
         WHERE t IS NOT NULL OR trim(line, ' ' || chr(9) || chr(13)) <> ''
       )
     )`,
    [text, firstLine],
    [VARCHAR, BIGINT],
  );
}

/** Bad lines of the staged NDJSON, in line order. */
export async function stagedProblems(
  conn: DuckDBConnection,
): Promise<Array<{ line: number; reason: string }>> {
  const reader = await conn.runAndReadAll(
    'SELECT line_no, problem FROM stage WHERE problem IS NOT NULL ORDER BY line_no',
  );
  return reader.getRows().map(([line, reason]) => ({ line: Number(line), reason: String(reason) }));
}
