import { type ClickHouseClient, ClickHouseError } from '@clickhouse/client-web';
import { clickHouseStringLiteral, quoteClickHouseIdentifier } from './clickhouse-sql-text.ts';

/**
 * A lock between engines opening one workspace at once (replicas started together), held while
 * one builds its rollups or the sort projection (`clickhouse-key-columns.ts`): a table
 * whose CREATE only one of them wins, ClickHouse answering the others that it exists. Its holder
 * renews it while it builds (rewriting the table's comment moves its metadata time) and drops it
 * when done; one not renewed for {@link BuildLockTiming.staleS} by ClickHouse's clock (its holder
 * died mid-build) is dropped by the next engine that waits for it, which then takes it.
 */

/** The lock table's name in the workspace database. */
export const BUILD_LOCK_TABLE = '_engine_rollup_build';
/** How a lock is kept alive and when it is taken as a dead holder's. */
export interface BuildLockTiming {
  /** Seconds without renewal after which the lock is taken as its dead holder's. */
  staleS: number;
  /** How often the holder renews it: several times within `staleS`, so a slow renewal is no loss. */
  renewMs: number;
}

/** The lock's timing: a build may run any length of time while its engine lives. */
export const BUILD_LOCK_TIMING: BuildLockTiming = { staleS: 120, renewMs: 15_000 };
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

/**
 * Renews the lock every `renewMs` until the returned function is called. A renewal that fails is
 * left to the next: the build goes on, and a lock not renewed for long is taken as a dead one's.
 */
function renewBuildLock(
  client: ClickHouseClient,
  database: string,
  renewMs: number,
): () => Promise<void> {
  let renewal: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    renewal = renewal
      .then(() =>
        client.command({
          query: `ALTER TABLE ${lockTable(database)} MODIFY COMMENT ${clickHouseStringLiteral(`renewed ${Date.now()}`)}`,
        }),
      )
      .catch(() => undefined);
  }, renewMs);
  return async () => {
    clearInterval(timer);
    await renewal;
  };
}

/** Resolves once the lock is free, dropping it first where its holder is taken as dead. */
async function awaitBuildLock(
  client: ClickHouseClient,
  database: string,
  staleS: number,
): Promise<void> {
  for (;;) {
    const result = await client.query({
      query: `SELECT dateDiff('second', metadata_modification_time, now()) AS age
        FROM system.tables WHERE database = {db:String} AND name = {name:String}`,
      query_params: { db: database, name: BUILD_LOCK_TABLE },
      format: 'JSONEachRow',
    });
    const [lock] = await result.json<{ age: number | string }>();
    if (!lock) return;
    if (Number(lock.age) > staleS) {
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
  timing: BuildLockTiming = BUILD_LOCK_TIMING,
): Promise<T> {
  for (;;) {
    if (await takeBuildLock(client, database)) {
      const stopRenewing = renewBuildLock(client, database, timing.renewMs);
      try {
        return await build();
      } finally {
        await stopRenewing();
        await releaseBuildLock(client, database);
      }
    }
    await awaitBuildLock(client, database, timing.staleS);
  }
}
