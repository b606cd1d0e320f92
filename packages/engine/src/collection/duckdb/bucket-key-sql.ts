import { BIGINT } from '../../storage/duckdb/duckdb-api.ts';
import type { NamedParams } from '../../storage/duckdb/sql-params.ts';
import type { BucketPlan, OffsetSegment } from '../plan/time-buckets.ts';

const DAY = 86_400;
const WEEK = 7 * DAY;

/**
 * The bucket plan's key as a DuckDB integer expression of `ts` (a BIGINT Unix-seconds
 * expression): integer arithmetic with a CASE over the window's offsets, a single integer where
 * they all agree. Its integers are named parameters `$k0`, `$k1`, … of `named`.
 */
export function bucketKeySql(plan: BucketPlan, ts: string, named: NamedParams): string {
  const params = {
    integer: (value: number) => {
      const name = `k${Object.keys(named).length}`;
      named[name] = { value, type: BIGINT };
      return `$${name}`;
    },
  };
  if (plan.clock) {
    const { width, segments } = plan.clock;
    return `((${ts} + ${piecewiseSql(ts, segments, (s) => s.offset, params)}) // ${params.integer(width)})`;
  }
  if (!plan.calendar) return '0';
  const { segments, biasDays } = plan.calendar;
  const unbias = biasDays ? ` - ${biasDays}` : '';
  const local = `(${ts} + ${piecewiseSql(ts, segments, (s) => s.offset + biasDays * DAY, params)})`;
  if (plan.granularity === 'Day') return `(${local} // ${params.integer(DAY)}${unbias})`;
  if (plan.granularity === 'Week') {
    // 1970-01-01 was a Thursday: day d belongs to the week starting on day 7 * ((d + 3) // 7) - 3.
    return `((${local} + ${params.integer(3 * DAY)}) // ${params.integer(WEEK)}${biasDays ? ` - ${biasDays / 7}` : ''})`;
  }
  // Month: the wall date from the local day number, then year * 12 + month - 1.
  const date = `(DATE '1970-01-01' + CAST(${local} // ${params.integer(DAY)}${unbias} AS INTEGER))`;
  return `(year(${date}) * 12 + month(${date}) - 1)`;
}

/** A SQL expression choosing, per row, the value that holds at `ts` among the segments. */
function piecewiseSql(
  ts: string,
  segments: readonly OffsetSegment[],
  value: (s: OffsetSegment) => number,
  params: { integer: (value: number) => string },
): string {
  const first = segments[0];
  if (!first) return '0';
  const values = segments.map(value);
  if (values.every((v) => v === values[0])) return params.integer(values[0] ?? 0);
  const branches = segments
    .slice(1)
    .map((s, i) => `WHEN ${ts} < ${params.integer(s.from)} THEN ${params.integer(values[i] ?? 0)}`);
  return `(CASE ${branches.join(' ')} ELSE ${params.integer(values[values.length - 1] ?? 0)} END)`;
}
