/** White space and comments before a statement's first keyword. */
const LEADING_COMMENTS = /^(\s+|--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)*/;

/**
 * Whether SQL text begins as a query (`SELECT`, `WITH`, `FROM`, or a parenthesis), checked
 * before any parser sees it: statements that are not a query at all (`SHOW`, `DESCRIBE`,
 * `DELETE`, `OPTIMIZE`, `SYSTEM`, …) are refused with the one read-only sentence on every
 * driver, whether or not that driver's parser knows them. What passes is still parsed.
 */
export function startsAsQuery(sql: string): boolean {
  return /^(SELECT|WITH|FROM)\b|^\(/i.test(sql.replace(LEADING_COMMENTS, ''));
}

/**
 * First keywords of statements that are not queries, in DuckDB's or ClickHouse's dialect. A
 * driver whose parser reports something else for some of them (DuckDB's syntax error for
 * ClickHouse's `OPTIMIZE`) refuses these with the read-only sentence first, while a typo such
 * as `SELEC 1` still gets the parser's sentence.
 */
const STATEMENT_KEYWORDS = new Set(
  `ALTER ANALYZE ATTACH BACKUP BEGIN CALL CHECK CHECKPOINT COMMIT COPY CREATE DEALLOCATE DELETE
  DESC DESCRIBE DETACH DROP EXCHANGE EXECUTE EXISTS EXPLAIN EXPORT FORCE GRANT IMPORT INSERT
  INSTALL KILL LOAD MERGE MOVE OPTIMIZE PIVOT PRAGMA PREPARE RENAME RESET RESTORE REVOKE
  ROLLBACK SET SHOW START SUMMARIZE SYSTEM TRUNCATE UNDROP UNPIVOT UPDATE USE VACUUM WATCH`.split(
    /\s+/,
  ),
);

/** Whether SQL text begins with the keyword of a statement that is not a query. */
export function startsAsOtherStatement(sql: string): boolean {
  const word = /^[A-Za-z]+/.exec(sql.replace(LEADING_COMMENTS, ''))?.[0];
  return word !== undefined && STATEMENT_KEYWORDS.has(word.toUpperCase());
}
