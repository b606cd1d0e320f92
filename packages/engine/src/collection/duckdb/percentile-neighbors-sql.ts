import { BIGINT, DOUBLE, LIST, listValue, VARCHAR } from '../../storage/duckdb/duckdb-api.ts';
import type { NamedParams, Statement } from '../../storage/duckdb/sql-params.ts';
import {
  AROUND_COLUMNS,
  type AroundValue,
  aroundValue,
  percentileAround,
  wholeWindow,
} from '../shape/percentile-neighbors.ts';

/**
 * Percentiles of many groups in two statements read in one snapshot instead of one that sorts
 * each group's values (`shape/percentile-neighbors.ts`): the first picks a value near each
 * group's ranks, `around` renders the second from its rows, and `rows` gives the caller's rows
 * from both, or null where the counts do not reach a rank or the groups are too many (then the
 * sorting statement runs as before).
 */
export interface PercentileNeighbors {
  first: Statement;
  around(rows: readonly (readonly unknown[])[]): Statement;
  rows(
    first: readonly (readonly unknown[])[],
    around: readonly (readonly unknown[])[],
  ): unknown[][] | null;
}

/** The {@link AROUND_COLUMNS} aggregates around `v` of `m`, among the rows where `f` holds. */
export function aroundColumnsSql(v: string, f = 'TRUE'): string {
  const where = f === 'TRUE' ? '' : `${f} AND `;
  return [
    `count(*) FILTER (WHERE ${where}m < ${v})`,
    `count(*) FILTER (WHERE ${where}m = ${v})`,
    `max(m) FILTER (WHERE ${where}m < ${v})`,
    `min(m) FILTER (WHERE ${where}m > ${v})`,
  ].join(', ');
}

/** A group key column of the base: its name and whether it holds text or integers. */
export interface GroupKey {
  name: string;
  text: boolean;
}

/** One group's percentile: its keys (null past `depth` for a coarser group), counts and value. */
export interface GroupPercentile {
  keys: readonly unknown[];
  /** How many keys name the group: all of them for the finest groups, fewer for coarser ones. */
  depth: number;
  events: unknown;
  value: number | null;
}

/**
 * The percentiles at `level` of `m` over `base` (a SELECT with the `keys` columns and `m`), per
 * group of all the keys and per group of each shorter run of them down to `coarsest` keys (a
 * Multi Line's cells, series and window: `coarsest` 0), as `layout` writes each group's row.
 * Groups beyond `maxGroups` give null.
 */
export function groupedPercentiles(options: {
  level: number;
  base: string;
  keys: readonly GroupKey[];
  coarsest: number;
  maxGroups: number;
  params: NamedParams;
  layout: (group: GroupPercentile) => unknown[];
}): PercentileNeighbors {
  const { level, base, keys, coarsest, maxGroups, params, layout } = options;
  const names = keys.map((key) => key.name);
  const depths = Array.from({ length: names.length - coarsest + 1 }, (_, i) => names.length - i);
  const sets = depths.map((depth) => `(${names.slice(0, depth).join(', ')})`).join(', ');
  const first: Statement = {
    sql: `SELECT ${names.join(', ')}, count(m) AS n, quantile_disc(m, $level) AS q, count(*) AS c
     FROM (${base})
     GROUP BY GROUPING SETS (${sets})
     LIMIT $groups`,
    params: {
      ...params,
      level: { value: level, type: DOUBLE },
      groups: { value: maxGroups + 1, type: BIGINT },
    },
  };
  const width = names.length + 3;
  const depthOf = (row: readonly unknown[]) =>
    names.reduce((d, _, i) => (row[i] === null || row[i] === undefined ? d : d + 1), 0);
  const id = (row: readonly unknown[], depth: number) =>
    JSON.stringify(row.slice(0, depth).map((key) => String(key)));
  const chosen = (row: readonly unknown[] | undefined) => {
    const v = row?.[names.length + 1];
    return v === null || v === undefined ? null : Number(v);
  };
  return {
    first,
    around(rows) {
      const byId = new Map(rows.map((row) => [id(row, depthOf(row)), row]));
      const finest = rows.filter((row) => depthOf(row) === names.length);
      const named: NamedParams = { ...params };
      const columns: string[] = [];
      const aggregates: string[] = [];
      keys.forEach((key, i) => {
        named[`g_${key.name}`] = {
          value: listValue(finest.map((row) => (key.text ? String(row[i]) : (row[i] as bigint)))),
          type: LIST(key.text ? VARCHAR : BIGINT),
        };
        columns.push(`unnest($g_${key.name}) AS ${key.name}`);
      });
      depths.forEach((depth) => {
        named[`v_${depth}`] = {
          value: listValue(finest.map((row) => chosen(byId.get(id(row, depth))))),
          type: LIST(DOUBLE),
        };
        columns.push(`unnest($v_${depth}) AS v_${depth}`);
        aggregates.push(aroundColumnsSql(`g.v_${depth}`));
      });
      return {
        sql: `WITH s AS (${base}),
     g AS (SELECT ${columns.join(', ')})
     SELECT ${names.map((name) => `s.${name}`).join(', ')}, ${aggregates.join(', ')}
     FROM s JOIN g ON ${names.map((name) => `s.${name} = g.${name}`).join(' AND ')}
     GROUP BY ${names.map((name) => `s.${name}`).join(', ')}`,
        params: named,
      };
    },
    rows(firstRows, aroundRows) {
      if (firstRows.length > maxGroups || firstRows.some((row) => row.length !== width)) {
        return null;
      }
      // A group's counts are its finest groups' counts around the group's own value, summed.
      const parts = new Map<string, AroundValue[]>();
      depths.forEach((depth, i) => {
        for (const around of aroundRows) {
          const key = `${depth} ${id(around, depth)}`;
          const list = parts.get(key) ?? [];
          parts.set(key, list);
          list.push(aroundValue(null, around, names.length + AROUND_COLUMNS * i));
        }
      });
      const out: unknown[][] = [];
      for (const row of firstRows) {
        const depth = depthOf(row);
        const n = Number(row[names.length] ?? 0);
        const around = wholeWindow(chosen(row), parts.get(`${depth} ${id(row, depth)}`) ?? []);
        const value = percentileAround(level, n, around);
        if (value === undefined) return null;
        out.push(
          layout({ keys: row.slice(0, names.length), depth, events: row[width - 1], value }),
        );
      }
      return out;
    },
  };
}
