/**
 * The demo's data step with the engine's real `demo-data` command in a temporary directory:
 * made when missing, kept when fresh, redone when interrupted, old or asked for, and a workspace
 * the demo did not make left alone.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDemoData } from '../src/ensure-demo-data.ts';

let dataDir: string;
const said: string[] = [];
const options = () => ({
  dataDir,
  events: 500,
  maxAgeHours: 24,
  fresh: false,
  say: (line: string) => said.push(line),
});
const workspace = () => join(dataDir, 'engine', 'default.duckdb');
const marker = () => JSON.parse(readFileSync(join(dataDir, 'engine', 'demo-data.json'), 'utf8'));

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'demo-data-test-'));
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('ensureDemoData', () => {
  it('generates the workspace when it is missing, and records a complete run', async () => {
    const state = await ensureDemoData(options());
    expect(state.generated).toBe(true);
    expect(statSync(workspace()).size).toBeGreaterThan(0);
    expect(marker()).toMatchObject({ events: 500, complete: true });
    expect(said.join('\n')).toContain('Generating the demo workspace: 500 events');
  }, 30_000);

  it('keeps fresh demo data', async () => {
    const before = statSync(workspace()).mtimeMs;
    const state = await ensureDemoData(options());
    expect(state.generated).toBe(false);
    expect(state.generatedAt?.toISOString()).toBe(marker().generatedAt);
    expect(statSync(workspace()).mtimeMs).toBe(before);
  });

  it('redoes an interrupted run, old data, and --fresh', async () => {
    writeFileSync(
      join(dataDir, 'engine', 'demo-data.json'),
      JSON.stringify({ ...marker(), complete: false }),
    );
    said.length = 0;
    expect((await ensureDemoData(options())).generated).toBe(true);
    expect(said[0]).toContain('interrupted');

    const old = new Date(Date.now() - 30 * 3_600_000).toISOString();
    writeFileSync(
      join(dataDir, 'engine', 'demo-data.json'),
      JSON.stringify({ ...marker(), generatedAt: old }),
    );
    said.length = 0;
    expect((await ensureDemoData(options())).generated).toBe(true);
    expect(said[0]).toContain('30 hours ago');
    expect(marker().complete).toBe(true);

    said.length = 0;
    expect((await ensureDemoData({ ...options(), fresh: true })).generated).toBe(true);
    expect(said[0]).toContain('--fresh');
  }, 60_000);

  it('never replaces a workspace it did not make', async () => {
    const other = await mkdtemp(join(tmpdir(), 'demo-data-foreign-'));
    try {
      mkdirSync(join(other, 'engine'));
      writeFileSync(join(other, 'engine', 'default.duckdb'), 'not ours');
      const state = await ensureDemoData({ ...options(), dataDir: other, fresh: true });
      expect(state.generated).toBe(false);
      expect(readFileSync(join(other, 'engine', 'default.duckdb'), 'utf8')).toBe('not ours');
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});
