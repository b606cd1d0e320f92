import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { WorkspaceDb } from '../src/storage/duckdb/workspace-db.ts';

/**
 * WorkspaceDb's two ways to write: `append` transactions side by side, `write` transactions
 * alone. Each step of the transactions is recorded as it happens, on a real database, while
 * the test holds transactions open.
 */

let dir: string;
let db: WorkspaceDb;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'engine-appends-'));
  db = await WorkspaceDb.open(join(dir, 'w.duckdb'));
  await db.write(async (tx) => {
    await tx.conn.run('CREATE TABLE t (v INTEGER)');
  });
});
afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A promise the test settles by hand. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** Lets every callback that is ready run (DuckDB's calls finish on other threads). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

async function values(): Promise<number[]> {
  return db.read(async (conn) =>
    (await conn.runAndReadAll('SELECT v FROM t ORDER BY v')).getRows().map(([v]) => Number(v)),
  );
}

describe('append and write', () => {
  test('appends run side by side, each in a transaction of its own', async () => {
    const steps: string[] = [];
    const first = gate();
    const a = db.append(async (conn) => {
      await conn.run('INSERT INTO t VALUES (1)');
      steps.push('a inserted');
      await first.opened;
      steps.push('a done');
    });
    await settle();
    const b = db.append(async (conn) => {
      await conn.run('INSERT INTO t VALUES (2)');
      steps.push('b inserted');
      // Not yet committed by a: each append is its own transaction.
      const seen = await conn.runAndReadAll('SELECT count(*) FROM t');
      steps.push(`b sees ${seen.getRows()[0]?.[0]}`);
    });
    await b;
    expect(steps).toEqual(['a inserted', 'b inserted', 'b sees 1']);
    first.open();
    await a;
    expect(await values()).toEqual([1, 2]);
  });

  test('a write waits for the appends under way, and later appends wait for it', async () => {
    const steps: string[] = [];
    const held = gate();
    const a = db.append(async (conn) => {
      await conn.run('INSERT INTO t VALUES (1)');
      await held.opened;
      steps.push('a done');
    });
    await settle();
    const w = db.write(async (tx) => {
      steps.push('write starts');
      await tx.conn.run('ALTER TABLE t ADD COLUMN w INTEGER');
      steps.push('write done');
    });
    await settle();
    const b = db.append(async (conn) => {
      steps.push('b starts');
      await conn.run('INSERT INTO t VALUES (2, 20)');
    });
    await settle();
    expect(steps).toEqual([]);
    held.open();
    await Promise.all([a, w, b]);
    expect(steps).toEqual(['a done', 'write starts', 'write done', 'b starts']);
    expect(await values()).toEqual([1, 2]);
  });

  test('a failing append rolls back and leaves its connection usable', async () => {
    await expect(
      db.append(async (conn) => {
        await conn.run('INSERT INTO t VALUES (1)');
        await conn.run('INSERT INTO no_such_table VALUES (1)');
      }),
    ).rejects.toThrow(/no_such_table/);
    await db.append(async (conn) => {
      await conn.run('INSERT INTO t VALUES (2)');
    });
    expect(await values()).toEqual([2]);
  });

  test('close waits for the appends under way', async () => {
    const held = gate();
    const a = db.append(async (conn) => {
      await held.opened;
      await conn.run('INSERT INTO t VALUES (7)');
    });
    await settle();
    const closed = db.close();
    held.open();
    await Promise.all([a, closed]);
    db = await WorkspaceDb.open(join(dir, 'w.duckdb'));
    expect(await values()).toEqual([7]);
  });
});
