import { afterAll, describe, expect, it } from 'vitest';
import { openWorkspaceInstance } from '../src/storage/duckdb/db-config.ts';

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
