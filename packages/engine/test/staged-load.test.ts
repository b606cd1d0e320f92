import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { stagedFilesRelation } from '../src/ingest/event-records.ts';
import { loadNdjson } from '../src/ingest/load-ndjson.ts';
import { StagedLoad } from '../src/ingest/staged-load.ts';
import { appendStaged } from '../src/storage/duckdb/cluster-rows.ts';
import { SqlParams } from '../src/storage/duckdb/sql-params.ts';
import { WorkspaceDb } from '../src/storage/duckdb/workspace-db.ts';

/**
 * The clustered load's staged path (`ingest/staged-load.ts`, `appendStaged`) sorts a large load
 * in runs of staged files, so no one statement sorts more than the memory limit holds: every
 * event lands once, `seq` keeps file order across runs, and each run is ordered by the key and
 * time on its own.
 */

const dir = mkdtempSync(join(tmpdir(), 'engine-staged-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('a load cut into runs: each event once, seq in file order, each run ordered by key and time', async () => {
  const staging = join(dir, 'staging');
  mkdirSync(staging);
  const events = Array.from({ length: 3000 }, (_, i) => ({
    // Time runs against file order in places, so that sorting shows.
    timestamp: 1_700_000_000 + ((i * 7919) % 3000),
    json: { event: `e${(i * 31) % 5}`, n: i },
  }));
  const file = join(dir, 'events.ndjson');
  writeFileSync(file, `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);

  const db = await WorkspaceDb.open(join(dir, 'default.duckdb'), { stagingDir: staging });
  try {
    const staged = new StagedLoad(db, 'c', { runBytes: 20_000 });
    const loaded = await loadNdjson(db, 'c', file, { workers: 0, chunkBytes: 8192, staged });
    expect(loaded.events).toBe(events.length);
    const runs = staged.segments().get(0)?.runs ?? [];
    expect(runs.length).toBeGreaterThanOrEqual(4);
    // The runs are cut by the staged files' real sizes: whole files, at most 20,000 bytes a run.
    const sizes = readdirSync(staging)
      .sort((a, b) => Number(a.match(/\d+/)?.[0]) - Number(b.match(/\d+/)?.[0]))
      .map((name) => statSync(join(staging, name)).size);
    let cuts = 0;
    let bytes = Number.POSITIVE_INFINITY;
    for (const size of sizes) {
      if (bytes + size > 20_000) [cuts, bytes] = [cuts + 1, 0];
      bytes += size;
    }
    expect(runs.length).toBe(cuts);
    expect(runs.reduce((sum, r) => sum + r.events, 0)).toBe(events.length);
    await appendStaged(db, 'c', staged.segments(), { field: 'event' });

    const table = db.catalog.get('c')?.segments[0]?.table as string;
    const rows = await db.read(async (conn) => {
      const reader = await conn.runAndReadAll(
        `SELECT "timestamp", seq, json_extract_string("json", '$.event'),
                CAST(json_extract("json", '$.n') AS INTEGER)
         FROM ${table} ORDER BY rowid`,
      );
      return reader.getRows().map(([ts, seq, event, n]) => ({
        ts: Number(ts),
        seq: Number(seq),
        event: String(event),
        n: Number(n),
      }));
    });
    // Each event once, and seq is its line's place in the file.
    expect(rows.map((r) => r.n).sort((a, b) => a - b)).toEqual(events.map((_, i) => i));
    for (const r of rows) expect(r.seq).toBe(r.n);
    // The rows form the runs in file order, each sorted by (event, timestamp, seq).
    let at = 0;
    for (const run of runs) {
      const slice = rows.slice(at, at + run.events);
      expect(slice.map((r) => r.n).sort((a, b) => a - b)).toEqual(
        Array.from({ length: run.events }, (_, i) => at + i),
      );
      const sorted = [...slice].sort(
        (a, b) => a.event.localeCompare(b.event) || a.ts - b.ts || a.seq - b.seq,
      );
      expect(slice).toEqual(sorted);
      at += run.events;
    }
  } finally {
    await db.close();
  }
});

test('the key is chosen on a sample of a few staged files spread over the load, not all of them', () => {
  // DuckDB opens a statement's files side by side, each with its own buffer: a 10M-event load
  // stages about 125 files, and reading all of them at once ran out of the load's memory.
  const files = Array.from({ length: 125 }, (_, i) => ({
    file: `/staged/${i}.csv`,
    longest: 100,
    events: 80_000,
    bytes: 16_000_000,
  }));
  const params = new SqlParams();
  const sample = stagedFilesRelation(files, params, { limit: 20_000 });
  const read = (sql: string) => (sql.match(/read_csv\(/g) ?? []).length;
  expect(read(sample)).toBe(8);
  const named = params.values.filter((v) => typeof v === 'string');
  expect(named[0]).toBe('/staged/0.csv');
  expect(named.at(-1)).toBe('/staged/124.csv');
  // The load itself reads every file.
  expect(read(stagedFilesRelation(files, new SqlParams(), { base: 0 }))).toBe(125);
});
