/**
 * Orders strings by Unicode code point, which is how DuckDB and ClickHouse order text (they
 * compare UTF-8 bytes, and UTF-8 keeps code point order). JavaScript's `<` compares UTF-16 code
 * units instead, which puts characters past U+FFFF (emoji, most CJK extensions) before those from
 * U+E000 to U+FFFF (fullwidth forms, private use): a tie ranked in JavaScript would then come out
 * in another order than the same tie ranked by the database.
 */
export function compareText(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/**
 * A code unit's place in code point order, at the first unit where two strings differ: a
 * surrogate starts a code point above U+FFFF, so it ranks above every other unit.
 */
function codePointRank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit < 0xe000 ? unit + 0x2000 : unit - 0x800;
}
