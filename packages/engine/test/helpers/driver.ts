import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import type { EngineOptions } from '../../src/index.ts';

/**
 * The storage driver this run of a suite is about: the `duckdb` project runs the conformance
 * suites on DuckDB files, the `clickhouse` project runs the same files on ClickHouse (chdb
 * behind the wire server of `test/clickhouse/`).
 */
export const DRIVER: 'duckdb' | 'clickhouse' = providedDriver();

/** The project's driver; DuckDB outside vitest (a child process importing the test helpers). */
function providedDriver(): 'duckdb' | 'clickhouse' {
  try {
    return inject('driver') ?? 'duckdb';
  } catch {
    return 'duckdb';
  }
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Set by the `duckdb-clustered` project: collections are clustered after each ingest. */
    clustered: boolean;
  }
}

/**
 * True in the `duckdb-clustered` project, which runs the conformance suites again with every
 * collection's rows reordered after each ingest (`storage/duckdb/cluster-rows.ts`), as
 * `engine load` leaves them, and later ingests appended behind the reordered rows.
 */
export const CLUSTERED: boolean = providedClustered();

function providedClustered(): boolean {
  try {
    return DRIVER === 'duckdb' && inject('clustered') === true;
  } catch {
    return false;
  }
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Set by the `duckdb-clustered` and `clickhouse-rollups` projects: workspaces keep rollups. */
    rollups: boolean;
  }
}

/**
 * True in the `duckdb-clustered` and `clickhouse-rollups` projects, whose conformance suites run
 * with every workspace keeping rollups (`storage/duckdb/rollups.ts`, and on ClickHouse the
 * materialized view of `storage/clickhouse/clickhouse-rollups.ts`), so that queries over enough
 * whole 15-minute spans read them: every answer must stay the same. (`rollup-requests.test.ts`
 * compares generated requests with them on and off on both drivers.)
 */
export const ROLLUPS: boolean = providedRollups();

function providedRollups(): boolean {
  try {
    return inject('rollups') === true;
  } catch {
    return false;
  }
}

/** The rollups the `duckdb-clustered` project keeps: by the keys and metrics the suites query most. */
export const ROLLUP_SPECS = {
  '*': {
    keys: ['event', 'plan', 'kind', 'country', 'tenant', 'name'],
    sums: ['price', 'amount', 'v', 'code', 'session_ms'],
  },
} as const;

/** True when the suite runs on the ClickHouse driver. */
export const ON_CLICKHOUSE = DRIVER === 'clickhouse';

/**
 * The options that put a test engine on this run's driver: rollups in the projects that keep
 * them, and for ClickHouse the shared server and databases of a prefix no other engine uses
 * (DuckDB's files are in the caller's `dataDir`).
 */
export function driverOptions(): Pick<EngineOptions, 'clickhouse' | 'rollups' | 'rollupReads'> {
  // Read wherever they answer: the suites' small workspaces hold about a rollup row per event.
  const rollups = ROLLUPS ? { rollups: ROLLUP_SPECS, rollupReads: 'always' as const } : {};
  if (!ON_CLICKHOUSE) return rollups;
  return {
    ...rollups,
    clickhouse: {
      url: inject('clickhouseUrl'),
      password: inject('clickhousePassword'),
      databasePrefix: `t${randomBytes(4).toString('hex')}_`,
    },
  };
}
