/*
 * What a workspace's rollups are kept by, on either driver (`duckdb/rollups.ts`,
 * `clickhouse/clickhouse-rollups.ts`), checked without loading a database library, so that the
 * CLI can refuse a bad declaration first.
 */

/**
 * Seconds in one span of UTC time: every zone offset in use since 1972, and every instant one
 * changes, is a multiple of it, so each zone's Hour, Day, Week and Month is a union of spans.
 */
export const SPAN_SECONDS = 900;

/**
 * Distinct string forms a key may have across the workspace's rollups: past it, the key stops
 * being rolled up (read), which bounds the rows per span a read adds up.
 */
export const MAX_KEY_VALUES = 64;

/** Declared keys and metrics, at most: each multiplies the rows or widens them. */
export const MAX_ROLLUP_KEYS = 8;

/** What a workspace's rollups are kept by: top-level payload keys (names without a dot). */
export interface RollupSpec {
  /** Keys whose values rows are kept per (low-cardinality: splits and `=` filters read them). */
  keys: readonly string[];
  /** Metrics whose exact Sum and Avg parts rows keep. */
  sums: readonly string[];
  /**
   * Whether the engine adds keys and metrics that queries use (`rollup-usage.ts`) to the
   * declared ones, on either driver (`drivers/auto-rollups.ts`).
   */
  auto?: boolean;
}

/**
 * How a query that rollups answer chooses between them and its events, which give the same
 * answer: `'cheaper'` weighs the rollup rows it would read against the events
 * (`collection/plan/rollup-eligibility.ts`), `'always'` reads the rollups wherever they answer
 * (tests that compare the two answers).
 */
export type RollupReads = 'cheaper' | 'always';

/** Queries a key (or metric) must be used by before the engine adds it to automatic rollups. */
export const AUTO_MIN_QUERIES = 20;

/**
 * Keys, and metrics, the engine adds to a workspace's rollups at most: each added key
 * multiplies the rows per span by up to {@link MAX_KEY_VALUES}, so fewer than may be declared.
 */
export const MAX_AUTO_KEYS = 3;

/**
 * Names a workspace's usage counts remember at most (keys and metrics together): past it, the
 * least-used is forgotten, so that queries naming ever new keys cannot grow the engine's memory.
 */
export const MAX_REMEMBERED_NAMES = 128;

/**
 * Names the engine may add by itself: ones a query chose rather than the server's operator, so
 * only plain names, which every statement may carry as a literal (`duckdb/rollups.ts`).
 */
export const AUTO_KEY_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A spec from declared names: top-level keys (no dot), each once, at most
 * {@link MAX_ROLLUP_KEYS} of each; throws a RangeError saying which name is not.
 */
export function rollupSpec(
  keys: readonly string[] = [],
  sums: readonly string[] = [],
  auto = false,
): RollupSpec {
  for (const list of [keys, sums]) {
    if (list.length > MAX_ROLLUP_KEYS) {
      throw new RangeError(`at most ${MAX_ROLLUP_KEYS} rollup keys and ${MAX_ROLLUP_KEYS} sums`);
    }
    for (const [i, name] of list.entries()) {
      if (name === '' || name.includes('.')) {
        throw new RangeError(`rollup key '${name}' is not a top-level key (a name without a dot)`);
      }
      if (list.indexOf(name) !== i) throw new RangeError(`rollup key '${name}' is named twice`);
    }
  }
  return auto ? { keys: [...keys], sums: [...sums], auto } : { keys: [...keys], sums: [...sums] };
}
