/**
 * The most result data SQL mode returns on any driver, estimated as it is read: 2,000 rows of
 * ordinary events are a few megabytes, and a query selecting huge values must not fill the
 * process's heap.
 */
export const MAX_RESULT_BYTES = 32 * 1024 * 1024;

/** The answer to a result larger than {@link MAX_RESULT_BYTES}. */
export const RESULT_TOO_LARGE =
  "The query's result is larger than SQL mode returns (32 MB); select fewer or smaller columns";

/** The answer to a query that needs more memory than SQL mode may use, on any driver. */
export const OUT_OF_MEMORY =
  'The query needs more memory than SQL mode allows; aggregate in SQL or select fewer rows';
