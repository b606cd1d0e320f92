import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openLoaderInstance, openWorkspaceInstance } from '../src/storage/db-config.ts';

describe('openWorkspaceInstance', async () => {
  // The machine's zone must not leak into SQL: pretend it is Los Angeles.
  const before = process.env.TZ;
  process.env.TZ = 'America/Los_Angeles';
  const instance = await openWorkspaceInstance(':memory:', { memoryLimit: '256MB' });
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
  });
});

describe('openLoaderInstance', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'engine-loader-config-'));
  const staging = join(dir, "it's staging");
  mkdirSync(staging);
  writeFileSync(join(staging, 'ok.csv'), 'a\n1\n');
  writeFileSync(join(dir, 'outside.csv'), 'a\n1\n');
  const instance = await openLoaderInstance(join(dir, 'w.duckdb'), staging);
  const conn = await instance.connect();
  afterAll(() => {
    conn.closeSync();
    instance.closeSync();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads files in the staging directory only', async () => {
    const rows = (await conn.runAndReadAll('SELECT a FROM read_csv($1)', [join(staging, 'ok.csv')]))
      .getRows()
      .map(([a]) => Number(a));
    expect(rows).toEqual([1]);
    for (const file of [join(dir, 'outside.csv'), '/etc/passwd', `${staging}/../outside.csv`]) {
      await expect(conn.run('SELECT * FROM read_csv($1)', [file]), file).rejects.toThrow(
        /disabled by configuration|Permission/,
      );
    }
  });

  it('is locked like a workspace database', async () => {
    for (const sql of [
      'SET enable_external_access = true',
      "SET allowed_directories = ['/']",
      "SET TimeZone = 'America/New_York'",
      'SET GLOBAL lock_configuration = false',
    ]) {
      await expect(conn.run(sql), sql).rejects.toThrow(/configuration has been locked/);
    }
    const zone = (await conn.runAndReadAll("SELECT current_setting('TimeZone')")).getRows();
    expect(zone).toEqual([['UTC']]);
  });
});
