import type { ClickHouseClient } from '@clickhouse/client-web';
import type { RollupSpec } from '../rollup-spec.ts';
import { withBuildLock } from './clickhouse-build-lock.ts';
import type { KeyColumnLookup } from './clickhouse-key-columns.ts';
import { ensureInsertedColumn, fillRollupTable } from './clickhouse-rollup-fill.ts';
import {
  ClickHouseRollups,
  currentTable,
  dropRollupTable,
  listRollupTables,
  specComment,
} from './clickhouse-rollups.ts';
import { ROLLUPS_TABLE } from './clickhouse-schema.ts';

/**
 * Brings a workspace database in line with its setting, before the workspace takes events, and
 * answers the rollups it keeps: with a spec, builds the table, its view and its rows from the
 * events where they are missing or kept by another spec, reading the form columns `columns`
 * names (give the declared keys theirs first); `true`, keeps the ones it has, else builds counts
 * alone; `false` drops them; unset (tools that are not the workspace's server) keeps what the
 * database has. Engines opening the workspace at once build one at a time
 * (`clickhouse-build-lock.ts`); one that waited uses what the other built when it is the same.
 * A build's statements go through `builds`, a client that waits as long as a build over every
 * event may take, where queries' client gives up.
 */
export async function openClickHouseRollups(
  client: ClickHouseClient,
  database: string,
  setting: RollupSpec | boolean | undefined,
  columns: KeyColumnLookup,
  builds: ClickHouseClient = client,
): Promise<ClickHouseRollups | undefined> {
  const found = await keptRollups(client, database, setting);
  if (found.settled) return found.rollups;
  return withBuildLock(client, database, async () => {
    // Another engine may have built these very rollups while this one waited for the lock.
    const now = await keptRollups(client, database, setting);
    if (now.settled) return now.rollups;
    const build = { client, builds };
    return buildRollups(build, database, setting as RollupSpec | boolean, columns);
  });
}

/** The rollups the database keeps where they suit the setting as they are; unsettled: to build or drop. */
async function keptRollups(
  client: ClickHouseClient,
  database: string,
  setting: RollupSpec | boolean | undefined,
): Promise<{ settled: true; rollups: ClickHouseRollups | undefined } | { settled: false }> {
  const { distributed, tables } = await listRollupTables(client, database);
  if (setting && distributed) {
    // A view on a Distributed table sees only the inserts its own node forwards.
    throw new Error(`rollups are not kept on a ClickHouse cluster yet (database ${database})`);
  }
  const current = currentTable(tables);
  const kept = (declared?: RollupSpec) =>
    current &&
    new ClickHouseRollups(client, database, current.spec, {
      table: current.name,
      follow: true,
      ...(declared ? { declared } : {}),
    });
  if (setting === undefined || (setting === true && current)) {
    return { settled: true, rollups: kept() };
  }
  if (typeof setting === 'object' && current && suits(current.spec, setting)) {
    return { settled: true, rollups: kept(setting.auto ? setting : undefined) };
  }
  // Without rollups to drop, nothing more to do (most opens: a DDL statement is not free).
  if (setting === false && tables.length === 0) return { settled: true, rollups: undefined };
  return { settled: false };
}

/** Whether rollups kept by `kept` serve `setting`: the same, or with `auto` more than declared. */
function suits(kept: RollupSpec, setting: RollupSpec): boolean {
  if (!setting.auto) return specComment(kept) === specComment(setting);
  return (
    setting.keys.every((k) => kept.keys.includes(k)) &&
    setting.sums.every((m) => kept.sums.includes(m))
  );
}

/**
 * Drops the rollups, and with a spec (or `true`: counts alone) builds them anew from the events,
 * counting once what other engines insert meanwhile.
 */
async function buildRollups(
  { client, builds }: { client: ClickHouseClient; builds: ClickHouseClient },
  database: string,
  setting: RollupSpec | boolean,
  columns: KeyColumnLookup,
): Promise<ClickHouseRollups | undefined> {
  // Every rollup table goes, those the engine widened by itself included.
  const { tables } = await listRollupTables(client, database);
  for (const t of tables) await dropRollupTable(client, database, t.name);
  await dropRollupTable(client, database, ROLLUPS_TABLE);
  if (setting === false) return undefined;
  const spec = setting === true ? { keys: [], sums: [] } : setting;
  await ensureInsertedColumn(builds, database);
  await fillRollupTable(builds, database, ROLLUPS_TABLE, spec, columns);
  return new ClickHouseRollups(client, database, spec, {
    follow: true,
    ...(typeof setting === 'object' && setting.auto ? { declared: setting } : {}),
  });
}
