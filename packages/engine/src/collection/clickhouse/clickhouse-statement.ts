/**
 * A rendered ClickHouse statement, what each family's renderer writes and the run stage
 * (`clickhouse-events.ts`) runs: its SQL with `{name:Type}` placeholders, their
 * values, and how run reads its columns.
 */
export interface ClickHouseStatement {
  sql: string;
  params: Record<string, unknown>;
  /** The columns that hold text, which run never reads as a number. */
  text: readonly number[];
  /** The columns that hold a sum's parts as `sumPartsSql` writes them, which run reads. */
  parts: readonly number[];
  /**
   * The rows are a sum's significands per sign and exponent (`exponentSumsSql`), and at most one
   * row of limb parts (`LIMB_PARTS_ROW`), which run reads as one row holding the one sum's parts.
   */
  exponentSums?: true;
  /**
   * The percentile at this level: the one row is the count of values and the two closest ranks
   * (`percentileRanksSql`), which run reads as one row holding the percentile.
   */
  percentile?: number;
}
