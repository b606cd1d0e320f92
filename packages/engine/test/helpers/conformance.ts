/**
 * The suites about the API's answers, which hold for every storage driver: the `duckdb` project
 * runs them on DuckDB files, `duckdb-clustered` again with every collection's rows reordered as
 * `engine load` leaves them and rollups kept, the `clickhouse` project on ClickHouse
 * (`test/helpers/driver.ts`).
 */
export const CONFORMANCE = [
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
  'test/percentile-ranks.test.ts',
  'test/number-texts.test.ts',
  'test/invalid-text.test.ts',
  'test/wide-events.test.ts',
  'test/ingest-bodies.test.ts',
];

/**
 * The conformance suites whose events go in through `ingest()` (`test/helpers/engine-server.ts`),
 * the one path that clusters a collection in the `duckdb-clustered` project and keeps rollups
 * there and in `clickhouse-rollups`. The others load their own events another way, so a run of
 * them in those projects would repeat the plain one exactly.
 */
export const CLUSTERED_CONFORMANCE = [
  'test/queries.test.ts',
  'test/dst.test.ts',
  'test/samples.test.ts',
  'test/real-client-requests.test.ts',
  'test/special-keys.test.ts',
  'test/percentile-ranks.test.ts',
];
