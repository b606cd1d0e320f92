import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { BadLine } from '../src/ingest/append-events.ts';
import { loadNdjson } from '../src/ingest/load-ndjson.ts';
import { WorkspaceDb } from '../src/storage/workspace-db.ts';

/** The loader across chunk boundaries: line numbers stay right and nothing is lost or doubled. */

let dir: string;
let db: WorkspaceDb;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'engine-load-'));
  db = await WorkspaceDb.open(join(dir, 'w.duckdb'));
});
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function stored(collection: string): Promise<number[]> {
  const entry = db.catalog.get(collection);
  if (!entry) return [];
  return db.read(async (conn) => {
    const reader = await conn.runAndReadAll(`SELECT json FROM ${entry.table} ORDER BY rowid`);
    return reader.getRows().map(([json]) => (JSON.parse(String(json)) as { i: number }).i);
  });
}

test('tiny chunks: every good line once, bad lines with their own numbers', async () => {
  const lines: string[] = [];
  const expectedBad: BadLine[] = [];
  const good: number[] = [];
  for (let i = 0; i < 500; i++) {
    if (i % 37 === 5) {
      lines.push(`{"timestamp": 1, "json": {"i": ${i}`); // cut short
      expectedBad.push({ line: i + 1, reason: 'is not valid JSON' });
    } else if (i % 53 === 7) {
      lines.push('   ');
    } else {
      lines.push(
        JSON.stringify({ timestamp: 1_700_000_000 + i, json: { i, pad: 'x'.repeat(i % 90) } }),
      );
      good.push(i);
    }
  }
  const file = join(dir, 'chunks.ndjson');
  writeFileSync(file, `\ufeff${lines.join('\r\n')}`);
  const bad: BadLine[] = [];
  const progress: number[] = [];
  const result = await loadNdjson(db, 'chunks', file, {
    chunkBytes: 700,
    onBadLine: (b) => bad.push(b),
    onProgress: (p) => progress.push(p.events),
  });
  expect(bad).toEqual(expectedBad);
  expect(result).toEqual({ events: good.length, badLines: expectedBad.length });
  expect(await stored('chunks')).toEqual(good);
  expect(progress.length).toBeGreaterThan(10);
  expect(progress[progress.length - 1]).toBe(good.length);
});

test('a line longer than a chunk is read whole', async () => {
  const long = JSON.stringify({ timestamp: 5, json: { i: 1, text: 'y'.repeat(5000) } });
  const file = join(dir, 'long.ndjson');
  writeFileSync(
    file,
    `${JSON.stringify({ timestamp: 4, json: { i: 0 } })}\n${long}\n${JSON.stringify({ timestamp: 6, json: { i: 2 } })}`,
  );
  const result = await loadNdjson(db, 'long', file, { chunkBytes: 1024 });
  expect(result).toEqual({ events: 3, badLines: 0 });
  expect(await stored('long')).toEqual([0, 1, 2]);
});

test('an empty file loads nothing', async () => {
  const file = join(dir, 'empty.ndjson');
  writeFileSync(file, '');
  expect(await loadNdjson(db, 'empty', file)).toEqual({ events: 0, badLines: 0 });
});
