import { createRequire } from 'node:module';

/**
 * DuckDB for the floor and the `read_ndjson` baseline, borrowed from the engine package (its
 * dependency) so that the benchmark measures the very same DuckDB build without a second copy.
 */
const require = createRequire(new URL('../../packages/engine/package.json', import.meta.url));

export const duckdb: typeof import('../../packages/engine/node_modules/@duckdb/node-api') =
  require('@duckdb/node-api');
