import { JSON_TOKENS } from '../json-tokens.ts';
import { clickHouseStringLiteral } from './clickhouse-sql-text.ts';

/**
 * The payload as ClickHouse's JSON functions can read it. Their parser refuses a whole document
 * holding an integer token of 2^64 or more or below -2^63, so in a document with such a run of
 * digits, each integer token of that length outside strings is rewritten as a marked string
 * (U+0000 and its digits), which the forms (`clickhouse-forms.ts`) read by the number rule.
 *
 * The event table computes the rewrite once per row, as the row is written: `json_marked` holds
 * the rewritten payload of the rows that need it ('' for the rest, so it costs next to nothing
 * to store or read), and `json_readable` reads whichever applies. Key columns' DEFAULTs and
 * queries name `json_readable`, so the rewrite is spelled out once in the table's metadata,
 * which ClickHouse caps at `max_query_size`. A table without these columns (made on a cluster
 * by an older engine: there the engine alters nothing) is read through the rewrite written out
 * in the query.
 */

/** The stored column: the rewritten payload where it differs from `json`, else ''. */
export const MARKED_JSON = 'json_marked';
/** The column reading the payload as ClickHouse's JSON functions can. */
export const READABLE_JSON = 'json_readable';

/**
 * An integer token ClickHouse's JSON reader refuses may hold: 20 digits or more, or a minus
 * and 19 (RE2). Shorter ones, and 20-digit ones below 2^64, read as they are, but marked they
 * read the same.
 */
export const LONG_INTEGER = '-[0-9]{19,}|[0-9]{20,}';

/** Whether the text holds a run that may be such a token (a cheap test before the rewrite). */
const LONG_RUN = `'-[0-9]{19}|[0-9]{20}'`;

/**
 * `json` with each long integer token outside strings as a marked string. A token between two
 * others is matched by the second pass, as one delimiter ends the first token's match.
 */
function markedSql(json: string): string {
  const token = `'([\\\\[,:\\\\s])(${LONG_INTEGER})([,\\\\]}\\\\s])'`;
  const mark = (text: string) =>
    `replaceRegexpAll(${text}, ${token}, '\\\\1"\\\\\\\\u0000\\\\2"\\\\3')`;
  return `arrayStringConcat(arrayMap(t -> if(startsWith(t, '"'), t, ${mark(mark('t'))}), extractAll(${json}, ${clickHouseStringLiteral(JSON_TOKENS)})))`;
}

/** The readable payload written out in full, for a table without {@link READABLE_JSON}. */
export function readableJsonSql(json: string): string {
  return `if(match(${json}, ${LONG_RUN}), ${markedSql(json)}, ${json})`;
}

/** The definitions of the two columns, for a `CREATE TABLE` or an `ADD COLUMN`. */
export function payloadColumnsSql(): string[] {
  // The rewrite reads '' for a row without a long run: an insert computes a column's
  // expression for every row, each branch of an `if` included. Written twice, it is computed
  // once (ClickHouse merges equal expressions), where a lambda binding it made an array per row.
  const source = `if(match(json, ${LONG_RUN}), json, '')`;
  const rewritten = markedSql(source);
  const marked = `if(${rewritten} = json, '', ${rewritten})`;
  return [
    `${MARKED_JSON} String MATERIALIZED ${marked} CODEC(ZSTD(1))`,
    `${READABLE_JSON} String ALIAS if(empty(${MARKED_JSON}), json, ${MARKED_JSON})`,
  ];
}

/**
 * SQL over the readable payload: `reading` is given the payload's name in it. Through the
 * column, or, on a table without it, a one-element array's lambda, which names the rewrite once
 * per reading (written out at each of a reading's JSON calls, it made a query several times
 * slower to plan).
 */
export type PayloadReader = (reading: (payload: string) => string) => string;

/** Reads the payload through {@link READABLE_JSON}. */
export const readPayloadColumn: PayloadReader = (reading) => reading(READABLE_JSON);

/** Reads the payload through the rewrite written out in the query. */
export const readPayloadInline: PayloadReader = (reading) =>
  `arrayMap(_doc -> ${reading('_doc')}, [${readableJsonSql('json')}])[1]`;
