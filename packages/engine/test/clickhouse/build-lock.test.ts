import { createClient } from '@clickhouse/client-web';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import {
  BUILD_LOCK_TABLE,
  withBuildLock,
} from '../../src/storage/clickhouse/clickhouse-build-lock.ts';

/**
 * The build lock between engines opening one workspace: a holder that lives keeps it however long
 * its build runs, and a dead holder's lock is taken once it goes unrenewed. Timings are shortened
 * to seconds; ClickHouse's clock judges a lock's age in whole seconds.
 */

const url = inject('clickhouseUrl');
const password = inject('clickhousePassword');
const client = createClient({ url, password });
const DB = 'buildlock_default';
const TIMING = { staleS: 1, renewMs: 250 };

beforeAll(async () => {
  await client.command({ query: `DROP DATABASE IF EXISTS ${DB}` });
  await client.command({ query: `CREATE DATABASE ${DB}` });
});
afterAll(async () => {
  await client.command({ query: `DROP DATABASE IF EXISTS ${DB}` });
  await client.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function lockExists(): Promise<boolean> {
  const result = await client.query({
    query:
      'SELECT count() AS n FROM system.tables WHERE database = {db:String} AND name = {name:String}',
    query_params: { db: DB, name: BUILD_LOCK_TABLE },
    format: 'JSONEachRow',
  });
  return Number((await result.json<{ n: string }>())[0]?.n) > 0;
}

describe('the build lock', () => {
  test('a build longer than the stale time keeps the lock while its engine lives', async () => {
    const steps: string[] = [];
    const first = withBuildLock(
      client,
      DB,
      async () => {
        steps.push('first starts');
        await sleep(3500);
        steps.push('first ends');
      },
      TIMING,
    );
    while (steps.length === 0) await sleep(20);
    const second = withBuildLock(
      client,
      DB,
      async () => {
        steps.push('second starts');
      },
      TIMING,
    );
    await Promise.all([first, second]);
    expect(steps).toEqual(['first starts', 'first ends', 'second starts']);
    expect(await lockExists()).toBe(false);
  });

  test("a dead holder's lock is taken once it goes unrenewed", async () => {
    // An engine that died mid-build leaves its lock table behind, never renewed.
    await client.command({
      query: `CREATE TABLE ${DB}.${BUILD_LOCK_TABLE} (holder UInt8) ENGINE = Memory`,
    });
    let built = false;
    await withBuildLock(
      client,
      DB,
      async () => {
        built = true;
      },
      TIMING,
    );
    expect(built).toBe(true);
    expect(await lockExists()).toBe(false);
  });
});
