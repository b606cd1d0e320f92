import type { Aggregation } from '@analytics-chart/protocol';
import {
  aliasOf,
  P2,
  sumPartAggregatesSql,
  sumPartsTextSql,
} from '../../storage/clickhouse/clickhouse-exact-sum-sql.ts';
import { QUANTILE } from '../plan/collection-plan.ts';

/** 2^64, by which the ranking keys of Sum and Avg scale values down so that sums never overflow. */
const SCALE = 'toFloat64(18446744073709551616.)';

/**
 * The parts of the exact sum of `m` (`plan/exact-sum.ts`) as one text: the three limb sums of
 * |m|·2^90 (62 bits each, signed by m, summed in Int128) for the values on that grid, the count,
 * then the bits of each value off the grid. Integer sums do not depend on the order parts are
 * merged in.
 */
export function sumPartsSql(metric: string, condition?: string): string {
  if (metric === 'NULL') return `''`;
  return metric.length <= SHORT_METRIC
    ? sumPartsByName(metric, condition)
    : sumPartsByLambda(metric, condition);
}

/** The longest metric (a column, or a choice among a few) whose steps are written by name. */
const SHORT_METRIC = 400;

/** The parts with each step on the metric named: fastest to run where the metric is short. */
function sumPartsByName(metric: string, condition?: string): string {
  return sumPartsTextSql(sumPartAggregatesSql(metric, condition));
}

/**
 * The parts with the metric read once per aggregate and the steps a lambda's, for a long metric:
 * ClickHouse analyses a name's expression again at every reference, so named steps on a deep
 * path's reading multiplied its planning time (arrays per row cost more to run, which its JSON
 * reading outweighs).
 */
function sumPartsByLambda(metric: string, condition?: string): string {
  const and = condition === undefined ? '' : ` AND (${condition})`;
  const only = condition === undefined ? '' : 'If';
  const when = condition === undefined ? '' : `, ${condition}`;
  const m = aliasOf('m', metric);
  const grid = (x: string) =>
    `abs(${x}) < ${P2.p96} AND abs(${x}) * ${P2.p90} = floor(abs(${x}) * ${P2.p90})`;
  // The three 62-bit limbs of |x|·2^90, signed by x; zeros off the grid and for no value.
  const limbs = `arrayMap(x -> if(${grid('x')}, arrayMap(h -> arrayMap(t -> [
      toInt128(sign(x) * h),
      toInt128(sign(x) * (t - h * ${P2.p62})),
      toInt128(sign(x) * (abs(x) * ${P2.p90} - t * ${P2.p62}))],
      [floor(abs(x) * ${P2.p28})])[1], [floor(abs(x) * ${P2.m34})])[1], [toInt128(0), toInt128(0), toInt128(0)]), [${m.defined}])[1]`;
  // An empty set's sum is no array: three zeros.
  const sums = `arrayStringConcat(arrayMap(s -> toString(s), arrayResize(sumForEach${only}(${limbs}${when}), 3, toInt128(0))), ' ')`;
  const rest = `arrayStringConcat(arrayMap(x -> toString(reinterpretAsUInt64(assumeNotNull(x))), groupArrayArray${only}(arrayFilter(x -> isNotNull(x) AND NOT (${grid('assumeNotNull(x)')}), [${m.name}])${when})), ' ')`;
  return `concat(${sums}, ' ', toString(countIf(isNotNull(${m.name})${and})), ' ', ${rest})`;
}

/**
 * The aggregate over `m` (NULL where the field has no number), and how an empty set reads. Sum
 * and Avg are their parts ({@link sumPartsSql}, which run reads); where SQL must
 * order by them, {@link aggregateOrderSql} is the key.
 */
export function aggregateSql(
  aggregation: Aggregation,
  m: string,
  params: Record<string, unknown>,
  condition?: string,
): string {
  // The -If combinators aggregate only the rows where `condition` holds.
  const only = condition === undefined ? '' : 'If';
  if (aggregation === 'Count') return `toFloat64(count${only}(${condition ?? ''}))`;
  if (aggregation === 'Sum' || aggregation === 'Avg') return sumPartsSql(m, condition);
  const level = QUANTILE[aggregation] as number;
  params.level = level;
  return percentileSql(m, '{level:Float64}', level >= 0.5, condition);
}

/**
 * The percentile rule both drivers write as the same IEEE steps (DuckDB's `percentileSql`):
 * the sorted values x, h = level·(n−1) as a double, lo = x[⌊h⌋], hi = x[⌈h⌉], d = h − ⌊h⌋, and
 * lo + d·(hi − lo); where hi − lo overflows, lo·(1 − d) + hi·d. NULL for no values. Only the
 * values up to x[⌈h⌉] are put in order, from the nearer end (`high`: the level is 0.5 or more):
 * the other values need not be, and sorting them all cost most of the query.
 */
function percentileSql(m: string, level: string, high: boolean, condition?: string): string {
  const values = condition === undefined ? `groupArray(${m})` : `groupArrayIf(${m}, ${condition})`;
  // The steps are a lambda's on the values, each bound once (a named step would be analysed
  // again, with the metric in it, at every reference).
  const bind = (name: string, value: string, body: string) =>
    `arrayMap(${name} -> ${body}, [${value}])[1]`;
  // x[i] (0-based) of the sorted values: from the end of the largest n − ⌊h⌋ in descending
  // order, or from the start of the smallest ⌈h⌉ + 1 in ascending order. Both are read in one
  // step, as a pair, so that the steps after it carry no array.
  const sorted = high
    ? 'arrayPartialReverseSort(toUInt64(toInt64(length(s)) - toInt64(floor(h))), s)'
    : 'arrayPartialSort(toUInt64(toInt64(ceil(h)) + 1), s)';
  const at = (index: string) =>
    high
      ? `arrayElement(x, toInt64(length(x)) - toInt64(${index}(h)))`
      : `arrayElement(x, toInt64(${index}(h)) + 1)`;
  const pair = `arrayMap(x -> (${at('floor')}, ${at('ceil')}), [${sorted}])[1]`;
  const step = bind(
    'p',
    pair,
    bind(
      'lo',
      'p.1',
      bind(
        'hi',
        'p.2',
        bind(
          'd',
          'h - floor(h)',
          bind('near', 'lo + d * (hi - lo)', 'if(isFinite(near), near, lo * (1. - d) + hi * d)'),
        ),
      ),
    ),
  );
  return bind(
    's',
    values,
    `if(length(s) = 0, NULL, ${bind('h', `${level} * (toFloat64(length(s)) - 1.)`, step)})`,
  );
}

/**
 * A percentile's two closest ranks of the one group of a statement, for the shape stage's
 * `interpolate` (`shape/growing-percentiles.ts`, the same steps as {@link percentileSql}): the
 * count of values and, in ascending order, x[⌊h⌋] and, where ⌈h⌉ ≠ ⌊h⌋, x[⌈h⌉] of the values
 * sorted, h = level·(n − 1), only as far as x[⌈h⌉] from the nearer end (`high`). The statement
 * must keep only rows with a value (`m` IS NOT NULL). The sorted values are sliced where they
 * are made: a lambda over them, or a name read twice, copies every value or analyses the metric
 * again. `m` names the metric (`defined` at its first use).
 */
export function percentileRanksSql(
  m: { defined: string; name: string },
  level: string,
  high: boolean,
): string {
  const count = aliasOf('n', 'toInt64(count())');
  const n = count.name;
  const h = `(${level} * (toFloat64(${n}) - 1.))`;
  // 1 where x[⌈h⌉] is another rank than x[⌊h⌋], else 0.
  const apart = `(toInt64(ceil(${h})) - toInt64(floor(${h})))`;
  const values = `groupArray(assumeNotNull(${m.defined}))`;
  // Descending, the largest n − ⌊h⌋: x[⌊h⌋] is the last of them, x[⌈h⌉] the one before.
  const last = `(${n} - toInt64(floor(${h})))`;
  const ranks = high
    ? `arrayReverse(arraySlice(arrayPartialReverseSort(toUInt64(${last}), ${values}), ${last} - ${apart}, 1 + ${apart}))`
    : `arraySlice(arrayPartialSort(toUInt64(toInt64(ceil(${h})) + 1), ${values}), toInt64(floor(${h})) + 1, 1 + ${apart})`;
  return `${count.defined}, ${ranks}`;
}

/**
 * What SQL ranks a group by where it must pick some (`plan/split-series.ts`, rankCandidatesSql):
 * `key` ± `slack` holds the aggregate's value (an empty Sum's is 0). Count's key is its exact
 * value; a percentile's is its value itself, `key` null: the statement reads the group's `v` as
 * its key rather than write the percentile twice, which ClickHouse would analyse twice. Sum's and
 * Avg's are floating-point sums scaled by 2^-64, with the slack of DuckDB's `aggregateOrderSql`:
 * (n + 4)·10^-15 of the sum of |m| and 10^-300 per value.
 */
export function aggregateOrderSql(
  aggregation: Aggregation,
  metric: string,
  params: Record<string, unknown>,
): { key: string | null; slack: string } {
  if (aggregation === 'Sum' || aggregation === 'Avg') {
    // The metric (a long expression for a deep path) written once, named.
    const m = aliasOf('m', metric);
    const key = `sumOrNull(${m.defined} / ${SCALE})`;
    const slack = `(toFloat64(count()) + 4.) * (1e-15 * sumOrNull(abs(${m.name}) / ${SCALE}) + 1e-300)`;
    return aggregation === 'Sum'
      ? { key: `coalesce(${key}, 0.)`, slack: `coalesce(${slack}, 0.)` }
      : { key: `${key} / count(${m.name})`, slack: `${slack} / count(${m.name})` };
  }
  if (QUANTILE[aggregation] !== undefined) return { key: null, slack: '0.' };
  return { key: aggregateSql(aggregation, metric, params), slack: '0.' };
}

/**
 * The ranking columns of a grouped SELECT, after its `v`: `o`, the order key, unless the key is
 * the value itself (then the SELECT above reads `v AS o`), and `e`, its slack.
 */
export function orderColumnsSql(order: { key: string | null; slack: string }): string {
  return order.key === null ? `${order.slack} AS e` : `${order.key} AS o, ${order.slack} AS e`;
}
