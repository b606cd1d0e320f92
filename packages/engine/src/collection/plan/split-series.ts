/**
 * More (split value, bucket) cells than this are ranked by the database instead of by the
 * engine: below it, one GROUP BY returns every cell and the engine ranks the series itself.
 */
export const MAX_SPLIT_CELLS = 10_000;
