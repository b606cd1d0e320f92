/** A ClickHouse identifier in backquotes, with backslashes and backquotes escaped. */
export function quoteClickHouseIdentifier(name: string): string {
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

/** A ClickHouse string literal, for the few places a name must be SQL text (view bodies). */
export function clickHouseStringLiteral(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
