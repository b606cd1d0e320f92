import { defineConfig } from 'vitest/config';

/**
 * The suites about the API's answers, which hold for every storage driver: the `duckdb` project
 * runs them on DuckDB files, `duckdb-clustered` again with every collection's rows reordered as
 * `engine load` leaves them, the `clickhouse` project on ClickHouse (`test/helpers/driver.ts`).
 */
const CONFORMANCE = [
  'test/queries.test.ts',
  'test/dst.test.ts',
  'test/field-paths.test.ts',
  'test/generated-requests.test.ts',
  'test/samples.test.ts',
  'test/real-client-requests.test.ts',
  'test/special-keys.test.ts',
  'test/errors.test.ts',
  'test/zone-transitions.test.ts',
  'test/sql-parameters.test.ts',
  'test/number-rule.test.ts',
];

// The ClickHouse tests share one chdb-backed server, started only when one of them runs.
export default defineConfig({
  test: {
    projects: [
      {
        extends: true,
        test: { name: 'duckdb', include: ['test/*.test.ts'], provide: { driver: 'duckdb' } },
      },
      {
        extends: true,
        test: {
          name: 'duckdb-clustered',
          include: CONFORMANCE,
          provide: { driver: 'duckdb', clustered: true },
        },
      },
      {
        extends: true,
        test: {
          name: 'clickhouse',
          include: ['test/clickhouse/*.test.ts', ...CONFORMANCE],
          globalSetup: ['test/clickhouse/global-setup.ts'],
          provide: { driver: 'clickhouse' },
          // One chdb server answers every file's queries in turn, setup hooks included.
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
    ],
  },
});
