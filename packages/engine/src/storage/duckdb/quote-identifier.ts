/**
 * Quotes a name for use as a SQL identifier (table, view, column), the one place where names
 * reach SQL text. Embedded double quotes are doubled, so any string becomes exactly one
 * identifier; NUL is refused because DuckDB cannot hold it in a name.
 */
export function quoteIdentifier(name: string): string {
  if (name.length === 0 || name.includes('\u0000')) {
    throw new RangeError('an identifier must be non-empty and free of NUL characters');
  }
  return `"${name.replaceAll('"', '""')}"`;
}
