import {
  type KeyColumnLookup,
  NO_KEY_COLUMNS,
} from '../../../storage/clickhouse/clickhouse-key-columns.ts';
import type { PayloadReader } from '../../../storage/clickhouse/clickhouse-readable-json.ts';
import { comparePaths } from '../../../storage/key-path.ts';
import type { CollectionPlan } from '../../plan/collection-plan.ts';
import type { BoundQuery } from '../bound-query.ts';

/**
 * One key path that spells a field, and its form columns (quoted) where the event table has
 * them; without, its forms are read from the payload at the path, as `payload` reads it.
 */
export interface ClickHouseSpelling {
  path: readonly string[];
  columns: { number: string; string: string } | null;
  payload: PayloadReader;
}

/** A field as ClickHouse holds it: its spellings in the order each event tries them. */
export interface ClickHouseField {
  name: string;
  spellings: readonly ClickHouseSpelling[];
}

/** A query bound to a ClickHouse workspace's key columns. */
export type ClickHouseBoundQuery = BoundQuery<ClickHouseField>;

/** Binds a plan to the key columns a query may read: the stage that reads them, once. */
export function bindClickHouseQuery(
  plan: CollectionPlan,
  columns: KeyColumnLookup = NO_KEY_COLUMNS,
): ClickHouseBoundQuery {
  const fields = new Map<string, ClickHouseField>();
  for (const name of plan.fields) {
    const spellings = fieldSpellings(name).map((path) => ({
      path,
      columns: columns.column(path) ?? null,
      payload: columns.payload,
    }));
    fields.set(name, { name, spellings });
  }
  const { query, windows } = plan;
  return {
    query,
    windows,
    fields,
    metric: query.metric === null ? null : (fields.get(query.metric) ?? null),
    split: query.split === null ? null : (fields.get(query.split) ?? null),
  };
}

/** Spellings of a field tried per event when it has more dots than this: the literal key and the full split. */
const MAX_SPELLED_PARTS = 6;

/**
 * The key paths that spell a dotted field (`a.b.c`: `a.b.c`; `a.b` › `c`; `a` › `b.c`;
 * `a` › `b` › `c`), in the order the DuckDB driver tries them: fewer keys first, then longer
 * keys from the left. A field of more than six parts: the literal key, then split at every dot.
 */
export function fieldSpellings(field: string): string[][] {
  const parts = field.split('.');
  if (parts.length > MAX_SPELLED_PARTS) return parts.length > 1 ? [[field], parts] : [parts];
  const out: string[][] = [];
  // Each of the parts.length - 1 dots either separates two keys or stays inside one.
  for (let mask = 0; mask < 2 ** (parts.length - 1); mask++) {
    const path: string[] = [parts[0] as string];
    for (let i = 1; i < parts.length; i++) {
      if (mask & (1 << (i - 1))) path.push(parts[i] as string);
      else path[path.length - 1] += `.${parts[i]}`;
    }
    out.push(path);
  }
  return out.sort(comparePaths);
}
