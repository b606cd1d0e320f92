/**
 * JSON text cut into its string literals and the runs between them (RE2, for DuckDB's
 * `regexp_extract_all` and ClickHouse's `extractAll`): the number rule writes a positive
 * exponent with JavaScript's `+` (`1e+21`) inside arrays too, and only the runs outside strings
 * hold numbers to rewrite.
 */
export const JSON_TOKENS = String.raw`"(?:[^"\\]|\\.)*"|[^"]+`;
