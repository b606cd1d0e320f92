import { defineConfig } from 'vitest/config';

// The ClickHouse tests share one chdb-backed server, started only when one of them runs.
export default defineConfig({
  test: {
    projects: [
      { extends: true, test: { name: 'duckdb', include: ['test/*.test.ts'] } },
      {
        extends: true,
        test: {
          name: 'clickhouse',
          include: ['test/clickhouse/*.test.ts'],
          globalSetup: ['test/clickhouse/global-setup.ts'],
          testTimeout: 30_000,
        },
      },
    ],
  },
});
