import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import {
  openWorkspaceInstance,
  ROW_GROUP_SIZE,
  STORAGE_VERSION,
} from '../src/storage/duckdb/db-config.ts';
import { DuckDBInstance } from '../src/storage/duckdb/duckdb-api.ts';

const dir = mkdtempSync(join(tmpdir(), 'db-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Rows per row group of a table, in row-group order. */
async function rowGroupSizes(conn: DuckDBConnection, table: string): Promise<number[]> {
  const reader = await conn.runAndReadAll(
    `SELECT max("count") FROM pragma_storage_info('${table}')
     GROUP BY row_group_id ORDER BY row_group_id`,
  );
  return reader.getRows().map((row) => Number(row[0]));
}

describe('openWorkspaceInstance', async () => {
  // The machine's zone must not leak into SQL: pretend it is Los Angeles.
  const before = process.env.TZ;
  process.env.TZ = 'America/Los_Angeles';
  const instance = await openWorkspaceInstance(join(dir, 'w.duckdb'), { memoryLimit: '256MB' });
  const conn = await instance.connect();
  afterAll(() => {
    conn.closeSync();
    instance.closeSync();
    process.env.TZ = before;
  });

  it('reads times in UTC whatever the machine zone', async () => {
    const rows = (
      await conn.runAndReadAll(
        // 1710050000 is 2024-03-10 05:53:20 UTC, still 2024-03-09 in Los Angeles.
        "SELECT current_setting('TimeZone'), CAST(date_trunc('day', to_timestamp(1710050000)) AS VARCHAR)",
      )
    ).getRows();
    expect(rows).toEqual([['UTC', '2024-03-10 00:00:00+00']]);
  });

  it('is locked: no statement changes a setting or reaches a file', async () => {
    for (const sql of [
      "SET TimeZone = 'America/New_York'",
      'SET enable_external_access = true',
      'SET GLOBAL lock_configuration = false',
      "SET memory_limit = '64GB'",
    ]) {
      await expect(conn.run(sql), sql).rejects.toThrow(/configuration has been locked/);
    }
    await expect(conn.run("SELECT * FROM read_csv('/etc/passwd')")).rejects.toThrow(
      /disabled by configuration/,
    );
    await expect(conn.run(`ATTACH '${join(dir, 'other.duckdb')}' AS other`)).rejects.toThrow(
      /disabled by configuration/,
    );
  });

  it('has the workspace file as its only database, in the storage version of new files', async () => {
    const rows = (
      await conn.runAndReadAll(
        `SELECT database_name, path, tags['storage_version'] FROM duckdb_databases()
         WHERE NOT internal ORDER BY database_name`,
      )
    ).getRows();
    expect(rows).toEqual([['workspace', join(dir, 'w.duckdb'), `${STORAGE_VERSION}+`]]);
    await expect(conn.run('USE memory')).rejects.toThrow(/memory/);
    await expect(conn.run('DETACH workspace')).rejects.toThrow(/default database/);
  });

  it('writes row groups of ROW_GROUP_SIZE rows', async () => {
    await conn.run(`CREATE TABLE t AS SELECT range AS x FROM range(${2 * ROW_GROUP_SIZE + 100})`);
    expect(await rowGroupSizes(conn, 't')).toEqual([ROW_GROUP_SIZE, ROW_GROUP_SIZE, 100]);
  });
});

describe('a file written with DuckDB’s default row groups', async () => {
  const file = join(dir, 'old.duckdb');
  const rows = 150_000;
  const old = await DuckDBInstance.create(file);
  const setup = await old.connect();
  await setup.run(`CREATE TABLE t AS SELECT range AS x FROM range(${rows})`);
  const defaultSizes = await rowGroupSizes(setup, 't');
  setup.closeSync();
  old.closeSync();

  it('opens, keeps its row groups, and takes new rows in the new size', async () => {
    // The premise: DuckDB's own row groups are larger than ours.
    expect(defaultSizes[0]).toBeGreaterThan(ROW_GROUP_SIZE);
    const instance = await openWorkspaceInstance(file, { memoryLimit: '256MB' });
    const conn = await instance.connect();
    try {
      expect(await rowGroupSizes(conn, 't')).toEqual(defaultSizes);
      expect((await conn.runAndReadAll('SELECT count(*), sum(x) FROM t')).getRows()).toEqual([
        [BigInt(rows), BigInt((rows * (rows - 1)) / 2)],
      ]);
      await conn.run(`CREATE TABLE u AS SELECT range AS x FROM range(${ROW_GROUP_SIZE + 1})`);
      expect(await rowGroupSizes(conn, 'u')).toEqual([ROW_GROUP_SIZE, 1]);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});
