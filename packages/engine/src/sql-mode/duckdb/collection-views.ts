import { DEFAULT_COLLECTION } from '@analytics-chart/protocol';
import { EngineError } from '../../engine-error.ts';
import { quoteIdentifier } from '../../storage/duckdb/quote-identifier.ts';
import { FILE_ACCESS_REFUSED, looksLikeFile } from './inspect-sql-ast.ts';
import type { SqlWorkspace } from './sql-workspace.ts';

/** The name hosted-service users write for "the collection this query is about". */
export const BASE_TABLE = 'base';

type Collection = Awaited<ReturnType<SqlWorkspace['collections']>>[number];

const EMPTY_RELATION =
  'SELECT CAST(NULL AS BIGINT) AS "timestamp", CAST(NULL AS VARCHAR) AS "json" WHERE false';

/**
 * The temporary views a query reads through, one per table name it mentions: a collection's
 * relation when the name is a collection (exact spelling first, then ignoring case, as DuckDB
 * resolves names), `base` standing for the base collection, and an empty `(timestamp, json)`
 * relation for any other name, since collections exist implicitly. Temporary views come first in
 * DuckDB's search path, so every name a query can write resolves to one of these and never to a
 * table of the storage layer or a system view. Names that are file paths or URLs are refused.
 */
export function collectionViewStatements(
  tables: readonly string[],
  collections: readonly Collection[],
  baseCollection: string = DEFAULT_COLLECTION,
): string[] {
  const byName = new Map(collections.map((c) => [c.name, c]));
  const views = new Map<string, string>();
  for (const table of tables) {
    const key = table.toLowerCase();
    if (views.has(key)) continue;
    let collection =
      byName.get(table) ?? collections.find((c) => c.name.toLowerCase() === key) ?? undefined;
    if (!collection && key === BASE_TABLE) collection = byName.get(baseCollection);
    if (!collection && looksLikeFile(table)) throw new EngineError(400, FILE_ACCESS_REFUSED);
    const body = collection
      ? `SELECT "timestamp", "json" FROM ${collection.relation}`
      : EMPTY_RELATION;
    views.set(key, `CREATE OR REPLACE TEMP VIEW ${quoteIdentifier(table)} AS ${body}`);
  }
  return [...views.values()];
}
