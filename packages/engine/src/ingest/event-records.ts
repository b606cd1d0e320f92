import type { SqlParams } from '../storage/duckdb/sql-params.ts';
import type { EventRecord } from '../storage/ingest-batch.ts';

export type { EventRecord } from '../storage/ingest-batch.ts';

/**
 * Getting events into DuckDB: the text of a whole batch travels as ONE bound VARCHAR and DuckDB
 * splits and parses it, because binding values one by one is far slower; every payload keeps
 * its bytes.
 */

/** The largest Unix second accepted (9999-12-31T23:59:59Z), as the protocol's time values. */
export const MAX_TIMESTAMP = 253_402_300_799;

// Record and field separators: control characters that valid JSON text never contains raw.
const RS = '\u001e';
const US = '\u001f';

/**
 * Text bound per list element, at most (UTF-16 units), because larger strings are allocated apart
 * from the heaps that V8 and the C allocator reuse and pay a page fault on each fresh page.
 */
const PIECE = 60_000;

/**
 * The SQL relation `(ts, payload)` of already-validated events, as the HTTP endpoints and the
 * demo generator produce them: their text bound as a few VARCHARs that DuckDB splits.
 */
export function recordsRelation(records: EventRecord[], params: SqlParams): string {
  const pieces: string[] = [];
  let piece = '';
  for (const r of records) {
    const record = `${r.timestamp}${US}${r.payload}`;
    if (piece && piece.length + record.length >= PIECE) {
      pieces.push(piece);
      piece = record;
    } else piece = piece ? `${piece}${RS}${record}` : record;
  }
  pieces.push(piece);
  return `(SELECT CAST(split_part(r, chr(31), 1) AS BIGINT) AS ts,
            substr(r, strpos(r, chr(31)) + 1) AS payload
     FROM (SELECT unnest(string_split(p, chr(30))) AS r
           FROM (SELECT unnest(${params.texts(pieces)}) AS p)))`;
}

/** The CSV reader's default longest line, in bytes; longer staged records raise it. */
const DEFAULT_MAX_LINE = 2_000_000;

/**
 * Staged events for `engine load`: a file that DuckDB's CSV reader splits (in C++, while the
 * loader's workers parse the next chunks). A record is `<ts>US RS<payload>RS` and a newline; the
 * payload is quoted with RS, so the new lines that JSON allows as white space in a payload sent
 * as text stay inside it, and RS never needs escaping. The workers write these bytes directly
 * (`ndjson-chunk.ts`).
 */
export const STAGED_SEPARATOR = US;
export const STAGED_QUOTE = RS;

/**
 * The SQL relation `(ts, payload)` of a staged file (see {@link STAGED_SEPARATOR}). `longest`
 * is the longest payload in UTF-8 bytes. One reader thread, because the parallel reader spends
 * more CPU merging its batches into row groups than it saves, and the loader's parse workers need
 * the other cores.
 */
export function stagedRelation(file: string, longest: number, params: SqlParams): string {
  const maxLine = longest + 64;
  const lineOption = maxLine > DEFAULT_MAX_LINE ? `, max_line_size = ${Math.ceil(maxLine)}` : '';
  return `(SELECT ts, payload FROM read_csv(${params.text(file)},
     columns = {'ts': 'BIGINT', 'payload': 'VARCHAR'}, header = false, auto_detect = false,
     delim = chr(31), quote = chr(30), escape = chr(30), parallel = false${lineOption}))`;
}

/** A staged file of the loader's, with its events' place in ingest order. */
export interface StagedFile {
  file: string;
  /** The longest payload in it, in UTF-8 bytes. */
  longest: number;
  /** Its events' count. */
  events: number;
  /** Its size in bytes. */
  bytes: number;
}

/**
 * Staged files a sample reads at most: DuckDB opens the files of one statement side by side,
 * each with a read buffer of its own, so a sample of every file of a large load would need
 * more memory than the load has.
 */
const SAMPLED_FILES = 8;

/** At most `count` of `files`, evenly spread from the first to the last. */
function spread<T>(files: readonly T[], count: number): readonly T[] {
  if (files.length <= count) return files;
  return Array.from(
    { length: count },
    (_, i) => files[Math.round((i * (files.length - 1)) / (count - 1))] as T,
  );
}

/**
 * The SQL relation `(ts, payload, ord)` of staged files read in the order given, `ord` counting
 * from `base` in that order; with `limit`, about that many events in all, the first ones of
 * {@link SAMPLED_FILES} files spread over the load (a sample that reads a few blocks of each).
 * Each file is read on one thread, so its rows come in file order; DuckDB reads the files side
 * by side.
 */
export function stagedFilesRelation(
  all: readonly StagedFile[],
  params: SqlParams,
  options: { base: number } | { limit: number },
): string {
  let base = 'base' in options ? options.base : 0;
  const files = 'limit' in options ? spread(all, SAMPLED_FILES) : all;
  const perFile = 'limit' in options ? Math.max(1, Math.ceil(options.limit / files.length)) : 0;
  const parts = files.map((f) => {
    const rows = stagedRelation(f.file, f.longest, params);
    const part =
      'limit' in options
        ? `(SELECT ts, payload, 0::BIGINT AS ord FROM ${rows} LIMIT ${perFile})`
        : `(SELECT ts, payload, ${base}::BIGINT + row_number() OVER () - 1 AS ord FROM ${rows})`;
    base += f.events;
    return part;
  });
  return `(${parts.map((p) => `SELECT * FROM ${p}`).join(' UNION ALL ')})`;
}
