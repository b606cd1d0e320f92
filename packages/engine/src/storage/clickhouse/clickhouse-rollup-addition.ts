import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client-web';
import { MAX_ROLLUP_KEYS, type RollupSpec } from '../rollup-spec.ts';
import type { RollupUses } from '../rollup-usage.ts';
import { withBuildLock } from './clickhouse-build-lock.ts';
import type { KeyColumnLookup } from './clickhouse-key-columns.ts';
import { ensureInsertedColumn, fillRollupTable } from './clickhouse-rollup-fill.ts';
import {
  type ClickHouseRollups,
  currentTable,
  dropRollupTable,
  formsSql,
  listRollupTables,
  specComment,
} from './clickhouse-rollups.ts';
import { EVENTS_TABLE, ROLLUPS_TABLE } from './clickhouse-schema.ts';
import { quoteClickHouseIdentifier } from './clickhouse-sql-text.ts';

/**
 * Automatic rollup keys on ClickHouse: a key or metric is added by building a wider rollup table
 * beside the one read, filled by its own materialized view and from the events while ingest goes
 * on (`clickhouse-rollup-fill.ts`), then read instead once its comment says it is complete
 * (`clickhouse-rollups.ts`). Engines sharing the ClickHouse add under the workspace's build
 * lock, each first taking up the table another added, and a table's name derives from its keys,
 * so two that decide at once add one table.
 */

/** What an addition needs of the workspace: the form columns its keys are read from. */
export interface AdditionColumns {
  /** Makes the top-level keys' form columns where missing, and answers the columns there are. */
  ensure(names: readonly string[]): Promise<KeyColumnLookup>;
}

/**
 * Adds `add`'s keys and sums to the workspace's rollups (after those of the table read now,
 * which another engine may have widened meanwhile), and makes `rollups` read the new table.
 * Answers the spec now kept, or undefined where the workspace keeps no complete rollups. The
 * build's statements go through `builds` (see `openClickHouseRollups`).
 */
export async function extendClickHouseRollups(
  client: ClickHouseClient,
  rollups: ClickHouseRollups,
  add: RollupUses,
  columns: AdditionColumns,
  builds: ClickHouseClient = client,
): Promise<RollupSpec | undefined> {
  const { database } = rollups;
  return withBuildLock(client, database, async () => {
    const { tables } = await listRollupTables(client, database);
    const current = currentTable(tables);
    if (!current) return undefined;
    rollups.adopt(current);
    const wider = (kept: readonly string[], more: readonly string[]) =>
      [...kept, ...more.filter((name) => !kept.includes(name))].slice(
        0,
        Math.max(kept.length, MAX_ROLLUP_KEYS),
      );
    const next = {
      keys: wider(current.spec.keys, add.keys),
      sums: wider(current.spec.sums, add.sums),
    };
    if (specComment(next) === specComment(current.spec)) return current.spec;
    // A table without a comment is an addition cut short: nobody else builds under the lock.
    for (const t of tables) if (!t.spec) await dropRollupTable(client, database, t.name);
    await ensureInsertedColumn(builds, database);
    const lookup = await columns.ensure([...add.keys, ...add.sums]);
    const name = generationName(next);
    await fillRollupTable(builds, database, name, next, lookup);
    rollups.adopt({ name, spec: next, age: 0 });
    return next;
  });
}

/** The distinct string forms top-level key `name` has across the workspace's events. */
export async function keyValueCount(
  client: ClickHouseClient,
  database: string,
  name: string,
  columns: KeyColumnLookup,
): Promise<number> {
  const events = `${quoteClickHouseIdentifier(database)}.${quoteClickHouseIdentifier(EVENTS_TABLE)}`;
  const result = await client.query({
    query: `SELECT uniqExact(${formsSql(name, columns).string}) FROM ${events}`,
    format: 'JSONCompactEachRow',
  });
  const [row] = await result.json<Array<number | string>>();
  return Number(row?.[0] ?? 0);
}

/** A rollup table's name from what it keeps, the same on every engine. */
function generationName(spec: RollupSpec): string {
  const hash = createHash('sha256').update(specComment(spec)).digest('hex').slice(0, 16);
  return `${ROLLUPS_TABLE}_${hash}`;
}
