import type { DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll } from 'vitest';
import { DuckDBInstance } from '../../src/storage/duckdb/duckdb-api.ts';

/**
 * A connection to an in-memory DuckDB for the tests of the calling suite: opened before them,
 * closed after. Returns the getter a test reads it through.
 */
export function memoryConnection(): () => DuckDBConnection {
  let instance: DuckDBInstance | undefined;
  let conn: DuckDBConnection | undefined;
  beforeAll(async () => {
    instance = await DuckDBInstance.create(':memory:');
    conn = await instance.connect();
  });
  afterAll(() => {
    conn?.closeSync();
    instance?.closeSync();
  });
  return () => {
    if (!conn) throw new Error('the in-memory DuckDB is opened before the tests');
    return conn;
  };
}
