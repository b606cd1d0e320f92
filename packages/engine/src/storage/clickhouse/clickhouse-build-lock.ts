import { type ClickHouseClient, ClickHouseError } from '@clickhouse/client-web';
import { quoteClickHouseIdentifier } from './clickhouse-sql-text.ts';

/**
 * A lock between engines opening one workspace at once (replicas started together), held while
 * one builds its rollups or the sort projection (`clickhouse-key-columns.ts`): a table
 * whose CREATE only one of them wins, ClickHouse answering the others that it exists. Its holder
 * drops it when done; one older than {@link BUILD_LOCK_STALE_S} by ClickHouse's clock (its holder
 * died mid-build) is dropped by the next engine that waits for it, which then takes it.
 */

/** The lock table's name in the workspace database. */
export const BUILD_LOCK_TABLE = '_engine_rollup_build';
/**
 * Seconds after which a lock is taken as its dead holder's: longer than any build may run (the
 * driver gives a build's statements their time within it).
 */
export const BUILD_LOCK_STALE_S = 900;
/** How often a waiting engine looks whether the lock is gone. */
const POLL_MS = 250;

const lockTable = (database: string) =>
  `${quoteClickHouseIdentifier(database)}.${quoteClickHouseIdentifier(BUILD_LOCK_TABLE)}`;

/** Takes the workspace's build lock: false where another engine holds it. */
async function takeBuildLock(client: ClickHouseClient, database: string): Promise<boolean> {
  try {
    await client.command({
      query: `CREATE TABLE ${lockTable(database)} (holder UInt8) ENGINE = Memory`,
    });
    return true;
  } catch (error) {
    if (error instanceof ClickHouseError && error.type === 'TABLE_ALREADY_EXISTS') return false;
    throw error;
  }
}

/** Lets the lock go. */
async function releaseBuildLock(client: ClickHouseClient, database: string): Promise<void> {
  await client.command({ query: `DROP TABLE IF EXISTS ${lockTable(database)}` });
}

/** Resolves once the lock is free, dropping it first where its holder is taken as dead. */
async function awaitBuildLock(client: ClickHouseClient, database: string): Promise<void> {
  for (;;) {
    const result = await client.query({
      query: `SELECT dateDiff('second', metadata_modification_time, now()) AS age
        FROM system.tables WHERE database = {db:String} AND name = {name:String}`,
      query_params: { db: database, name: BUILD_LOCK_TABLE },
      format: 'JSONEachRow',
    });
    const [lock] = await result.json<{ age: number | string }>();
    if (!lock) return;
    if (Number(lock.age) > BUILD_LOCK_STALE_S) {
      await releaseBuildLock(client, database);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Runs `build` holding the workspace's build lock, waiting for it first while another engine
 * holds it; `build` looks again at what it is to do, since the other may have done it meanwhile.
 */
export async function withBuildLock<T>(
  client: ClickHouseClient,
  database: string,
  build: () => Promise<T>,
): Promise<T> {
  for (;;) {
    if (await takeBuildLock(client, database)) {
      try {
        return await build();
      } finally {
        await releaseBuildLock(client, database);
      }
    }
    await awaitBuildLock(client, database);
  }
}
