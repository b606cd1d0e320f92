import { defineConfig } from 'vitest/config';
import { CLUSTERED_CONFORMANCE, CONFORMANCE } from './test/helpers/conformance.ts';

// The ClickHouse tests share one chdb-backed server, started only when one of them runs.
export default defineConfig({
  test: {
    // Files share a worker's loaded modules (the engine, DuckDB's and chdb's bindings) instead of
    // loading them again each: no test here changes module state, and each one opens its own
    // engine, data directory and databases.
    isolate: false,
    // Tests check answers, not speed: a busy machine (CI runs two suites at once) must not fail them.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'duckdb',
          include: ['test/*.test.ts'],
          // cli.test.ts runs the compiled CLI (dist/cli/main.js), as the package's bin on npm.
          globalSetup: ['../../test/kit/src/fresh-dist.ts'],
          provide: { driver: 'duckdb' },
        },
      },
      {
        extends: true,
        test: {
          name: 'duckdb-clustered',
          include: CLUSTERED_CONFORMANCE,
          // Files as a long-running server leaves them: clustered, and keeping rollups.
          provide: { driver: 'duckdb', clustered: true, rollups: true },
        },
      },
      {
        extends: true,
        test: {
          name: 'clickhouse',
          // rollup-requests.test.ts compares rollups on and off on either driver.
          include: ['test/clickhouse/*.test.ts', 'test/rollup-requests.test.ts', ...CONFORMANCE],
          globalSetup: ['test/clickhouse/global-setup.ts'],
          provide: { driver: 'clickhouse' },
          // One chdb server answers every file's queries in turn, setup hooks included.
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'clickhouse-rollups',
          include: CLUSTERED_CONFORMANCE,
          globalSetup: ['test/clickhouse/global-setup.ts'],
          // Workspaces keeping rollups by a materialized view, as duckdb-clustered keeps them.
          provide: { driver: 'clickhouse', rollups: true },
        },
      },
    ],
  },
});
