import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance, listValue } from '@duckdb/node-api';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { createEngine, WorkspaceDb } from '../src/index.ts';
import { MAX_TYPED_KEYS } from '../src/storage/duckdb/catalog.ts';
import { openLoaderInstance } from '../src/storage/duckdb/db-config.ts';
import { quoteIdentifier } from '../src/storage/duckdb/quote-identifier.ts';
import { jsonPointer } from '../src/storage/key-path.ts';

/** The storage layer: identifiers, key paths, the catalog, and the overflow fallback. */

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'engine-storage-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('loading @duckdb/node-api', () => {
  test('the sources take its values through storage/duckdb/duckdb-api.ts, which requires it', () => {
    // An ES import of the CommonJS package makes Node lex all its files at start-up (see
    // duckdb-api.ts); type-only imports are erased and cost nothing.
    const src = fileURLToPath(new URL('../src/', import.meta.url));
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) =>
      /\.(ts|mts|js|mjs)$/.test(f),
    );
    expect(files.length).toBeGreaterThan(20);
    const valueImports = files.filter((file) => {
      const text = readFileSync(join(src, file), 'utf8');
      return [...text.matchAll(/import\s+(type\s+)?[^;]*?from\s+'@duckdb\/node-api'/g)].some(
        (m) => !m[1],
      );
    });
    expect(valueImports).toEqual([]);
    const shim = readFileSync(join(src, 'storage', 'duckdb', 'duckdb-api.ts'), 'utf8');
    expect(shim).toContain("createRequire(import.meta.url)('@duckdb/node-api')");
  });
});

describe('quoteIdentifier', () => {
  test.each([
    ['events', '"events"'],
    ['all events', '"all events"'],
    ['a"b', '"a""b"'],
    ['"; DROP TABLE x; --', '"""; DROP TABLE x; --"'],
    ['é🦆', '"é🦆"'],
  ])('%s', (name, quoted) => {
    expect(quoteIdentifier(name)).toBe(quoted);
  });
  test('refuses what DuckDB cannot name', () => {
    expect(() => quoteIdentifier('')).toThrow(RangeError);
    expect(() => quoteIdentifier('a\u0000b')).toThrow(RangeError);
  });
  test('round-trips through DuckDB as exactly one identifier', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    for (const name of ['a"b', '"; DROP TABLE t; --', 'x.y', "it's"]) {
      await conn.run(`CREATE TABLE ${quoteIdentifier(name)} (v INTEGER)`);
      const tables = await conn.runAndReadAll(
        'SELECT table_name FROM duckdb_tables() WHERE table_name = $1',
        [name],
      );
      expect(tables.getRows()).toEqual([[name]]);
    }
    conn.closeSync();
    db.closeSync();
  });
});

describe('jsonPointer', () => {
  test('escapes ~ and / (RFC 6901)', () => {
    expect(jsonPointer(['device', 'os'])).toBe('/device/os');
    expect(jsonPointer(['a/b', 'c~d', 'e.f', ''])).toBe('/a~1b/c~0d/e.f/');
  });
});

describe('workspace database', () => {
  test('collections with any name get a view of exactly timestamp and json', async () => {
    const dir = tempDir();
    const engine = await createEngine({
      dataDir: dir,
      workspaces: { default: 'k' },
      bodyWorkers: 0,
    });
    for (const collection of ['plain', 'with "quotes"', 'spaces and.dots']) {
      const answer = await engine.log({ api_key: 'k', collection, json: { a: 1 }, timestamp: 10 });
      expect(answer.status).toBe(200);
    }
    await engine.close();
    const db = await WorkspaceDb.open(join(dir, 'default.duckdb'));
    try {
      const views = await db.collections();
      expect(views.map((v) => v.name)).toEqual(['plain', 'spaces and.dots', 'with "quotes"']);
      for (const { relation } of views) {
        const rows = await db.read(async (conn) => {
          const reader = await conn.runAndReadAll(`SELECT * FROM ${relation}`);
          return {
            columns: reader.columnNames(),
            types: reader.columnTypes().map(String),
            rows: reader.getRows(),
          };
        });
        expect(rows).toEqual({
          columns: ['timestamp', 'json'],
          types: ['BIGINT', 'VARCHAR'],
          rows: [[10n, '{"a":1}']],
        });
      }
    } finally {
      await db.close();
    }
  });

  test('the catalog and data survive a reopen', async () => {
    const dir = tempDir();
    const first = await createEngine({
      dataDir: dir,
      workspaces: { default: 'k' },
      bodyWorkers: 0,
    });
    await first.log({ api_key: 'k', json: { device: { os: 'ios' }, n: '5' }, timestamp: 10 });
    await first.close();
    const second = await createEngine({
      dataDir: dir,
      workspaces: { default: 'k' },
      bodyWorkers: 0,
    });
    const answer = await second.query({
      api_key: 'k',
      graph_type: 'Table',
      split: 'device.os',
      filters: [['n', '>', 4]],
      start: 0,
      end: 'now',
    });
    expect(answer.body).toEqual({ result: [{ 'device.os': 'ios', Count: 1 }], metadata: {} });
    await second.close();
  });

  test(`an event with more than ${MAX_TYPED_KEYS} keys is answered on every one of them`, async () => {
    const dir = tempDir();
    const engine = await createEngine({
      dataDir: dir,
      workspaces: { default: 'k' },
      bodyWorkers: 0,
    });
    const json: Record<string, number | string> = {};
    for (let i = 0; i < MAX_TYPED_KEYS + 10; i++) json[`key_${i}`] = i;
    await engine.log({ api_key: 'k', json, timestamp: 100 });
    await engine.log({
      api_key: 'k',
      json: { ...json, [`key_${MAX_TYPED_KEYS + 5}`]: 'five' },
      timestamp: 101,
    });
    const last = `key_${MAX_TYPED_KEYS + 5}`;
    const table = await engine.query({
      api_key: 'k',
      graph_type: 'Table',
      split: last,
      start: 0,
      end: 'now',
    });
    expect(table.body).toEqual({
      result: [
        { [last]: String(MAX_TYPED_KEYS + 5), Count: 1 },
        { [last]: 'five', Count: 1 },
      ],
      metadata: {},
    });
    const count = await engine.query({
      api_key: 'k',
      graph_type: 'Single Value',
      filters: [[`key_${MAX_TYPED_KEYS + 7}`, '>', MAX_TYPED_KEYS]],
      start: 0,
      end: 'now',
    });
    expect(count.body).toEqual({ result: [{ Count: 2 }], metadata: {} });
    await engine.close();
  }, 60_000);
});

describe('payload storage', () => {
  /** Logs events with distinct payloads, checkpoints, and reads back what DuckDB stored. */
  async function storePayloads(file: string) {
    const db = await WorkspaceDb.open(file);
    // Few distinct payloads, so that DuckDB's own choice is always a compressed one (with
    // payloads all different it sometimes keeps short text uncompressed).
    const payloads = Array.from({ length: 3000 }, (_, i) =>
      JSON.stringify({ event: `e${i % 7}`, n: i % 20, text: 'é🦆'.repeat(i % 5) }),
    );
    try {
      await db.write(async (tx) => {
        const draft = await tx.collection('events');
        await tx.conn.run(
          `INSERT INTO ${draft.table} SELECT i, $1[i + 1] FROM range(${payloads.length}) t(i)`,
          [listValue(payloads)],
        );
      });
      await db.read((conn) => conn.run('CHECKPOINT'));
      return await db.read(async (conn) => {
        const table = db.catalog.get('events')?.table;
        const compression = await conn.runAndReadAll(
          `SELECT DISTINCT compression FROM pragma_storage_info($1) WHERE column_name = 'json' AND segment_type = 'VARCHAR'`,
          [table ?? ''],
        );
        const stored = await conn.runAndReadAll(`SELECT "json" FROM ${table} ORDER BY "timestamp"`);
        return {
          compression: compression.getRows().map(([c]) => c),
          same: stored.getRows().every(([text], i) => text === payloads[i]),
        };
      });
    } finally {
      await db.close();
    }
  }

  test('new files compress payload text with zstd and keep it byte for byte', async () => {
    expect(await storePayloads(join(tempDir(), 'new.duckdb'))).toEqual({
      compression: ['ZSTD'],
      same: true,
    });
  });

  test("files in the format before zstd keep DuckDB's own choice", async () => {
    const file = join(tempDir(), 'old.duckdb');
    const old = await DuckDBInstance.create(file, { storage_compatibility_version: 'v1.0.0' });
    old.closeSync();
    const { compression, same } = await storePayloads(file);
    expect(same).toBe(true);
    expect(compression).not.toContain('ZSTD');
    expect(compression).not.toContain('Uncompressed');
    expect(compression.length).toBeGreaterThan(0);
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

  test('reads files in the staging directory only', async () => {
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

  test('is locked like a workspace database', async () => {
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
