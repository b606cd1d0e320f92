import { BIGINT, DOUBLE, LIST, listValue, VARCHAR } from '../../storage/duckdb/duckdb-api.ts';
import type { NamedParams, Statement } from '../../storage/duckdb/sql-params.ts';
import {
  AROUND_COLUMNS,
  aroundCounts,
  percentileAround,
  summedAround,
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
  /** The second statement, or null where the first found too many groups. */
  around(rows: readonly (readonly unknown[])[]): Statement | null;
  rows(
    first: readonly (readonly unknown[])[],
    around: readonly (readonly unknown[])[] | null,
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

/** One group's percentile per population: its keys (null past `depth` for a coarser group). */
export interface GroupPercentile {
  keys: readonly unknown[];
  /** How many keys name the group: all of them for the finest groups, fewer for coarser ones. */
  depth: number;
  /** Per population, its percentile (null for no value) and its count of events. */
  values: ReadonlyArray<{ value: number | null; events: unknown }>;
}

/**
 * The percentiles at `level` of `m` over `base` (a SELECT with the `keys` columns and `m`), per
 * group of all the keys and per group of each shorter run of them down to `coarsest` keys (a
 * Multi Line's cells, series and window: `coarsest` 0), for each of `populations` (conditions
 * on the base's columns; the rows where one holds), as `layout` writes each group's row. More
 * than `maxGroups` groups give null.
 */
export function groupedPercentiles(options: {
  level: number;
  base: string;
  keys: readonly GroupKey[];
  coarsest: number;
  populations?: readonly string[];
  maxGroups: number;
  params: NamedParams;
  layout: (group: GroupPercentile) => unknown[];
}): PercentileNeighbors {
  const { level, base, keys, coarsest, maxGroups, params, layout } = options;
  const populations = options.populations ?? ['TRUE'];
  const names = keys.map((key) => key.name);
  const depths = Array.from({ length: names.length - coarsest + 1 }, (_, i) => names.length - i);
  const sets = depths.map((depth) => `(${names.slice(0, depth).join(', ')})`).join(', ');
  const filter = (p: string) => (p === 'TRUE' ? '' : ` FILTER (WHERE ${p})`);
  const first: Statement = {
    sql: `SELECT ${names.join(', ')}, ${populations
      .map(
        (p, i) =>
          `count(m)${filter(p)} AS n${i}, quantile_disc(m, $level)${filter(p)} AS q${i}, count(*)${filter(p)} AS c${i}`,
      )
      .join(', ')}
     FROM (${base})
     GROUP BY GROUPING SETS (${sets})
     LIMIT $groups`,
    params: {
      ...params,
      level: { value: level, type: DOUBLE },
      groups: { value: maxGroups + 1, type: BIGINT },
    },
  };
  const width = names.length + 3 * populations.length;
  const depthOf = (row: readonly unknown[]) =>
    names.reduce((d, _, i) => (row[i] === null || row[i] === undefined ? d : d + 1), 0);
  const id = (row: readonly unknown[], depth: number) =>
    JSON.stringify(row.slice(0, depth).map((key) => String(key)));
  const chosen = (row: readonly unknown[] | undefined, i: number) => {
    const v = row?.[names.length + 3 * i + 1];
    return v === null || v === undefined ? null : Number(v);
  };
  // The around statement's columns: per depth, per population, AROUND_COLUMNS of them.
  const offset = (d: number, i: number) =>
    names.length + AROUND_COLUMNS * (d * populations.length + i);
  return {
    first,
    around(rows) {
      if (rows.length > maxGroups) return null;
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
        populations.forEach((p, i) => {
          const v = `v_${depth}_${i}`;
          named[v] = {
            value: listValue(finest.map((row) => chosen(byId.get(id(row, depth)), i))),
            type: LIST(DOUBLE),
          };
          columns.push(`unnest($${v}) AS ${v}`);
          aggregates.push(aroundColumnsSql(`g.${v}`, p));
        });
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
      if (!aroundRows || firstRows.some((row) => row.length !== width)) return null;
      // A group's counts are its finest groups' counts around the group's own value, summed.
      const finestOf = new Map<string, (readonly unknown[])[]>();
      for (const depth of depths) {
        for (const around of aroundRows) {
          const key = `${depth} ${id(around, depth)}`;
          const list = finestOf.get(key) ?? [];
          finestOf.set(key, list);
          list.push(around);
        }
      }
      const out: unknown[][] = [];
      for (const row of firstRows) {
        const depth = depthOf(row);
        const parts = finestOf.get(`${depth} ${id(row, depth)}`) ?? [];
        const values: Array<{ value: number | null; events: unknown }> = [];
        for (let i = 0; i < populations.length; i++) {
          const at = offset(depths.indexOf(depth), i);
          const around = summedAround(
            chosen(row, i),
            parts.map((part) => aroundCounts(part, at)),
          );
          const n = Number(row[names.length + 3 * i] ?? 0);
          const value = percentileAround(level, n, around);
          if (value === undefined) return null;
          values.push({ value, events: row[names.length + 3 * i + 2] });
        }
        out.push(layout({ keys: row.slice(0, names.length), depth, values }));
      }
      return out;
    },
  };
}
