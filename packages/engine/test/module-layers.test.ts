import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The engine's source folders are layers: the front (`engine.ts`, `http/`, `cli/`) over the
 * storage drivers (`drivers/`), over the two query modes (`collection/`, `sql-mode/`), over
 * `storage/`, with `ingest/` above storage too. These tests read every import of every source
 * file and check that no arrow points back up, and that only a driver's own folders import a
 * database library, so a newcomer can trust the folder names.
 */

const SRC = resolve(import.meta.dirname, '../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|cjs|mjs|js)$/.test(entry.name) ? [path] : [];
  });
}

/** Relative specifiers of static imports, re-exports, dynamic imports and requires. */
function relativeImports(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^'"`;]*?\sfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const pattern of patterns) {
    for (const match of text.matchAll(pattern)) {
      const specifier = match[1] as string;
      if (specifier.startsWith('.')) found.push(specifier);
    }
  }
  return found;
}

/** The libraries that talk to a database: only a driver's own folders may import them. */
const DRIVER_LIBRARIES = ['@duckdb/node-api', '@clickhouse/client-web', 'chdb'];

/**
 * The folders that hold no driver's code: they reach a database only through a driver's
 * storage, so that a new driver never has to touch them.
 */
const NEUTRAL = [
  'collection/plan/',
  'collection/bind/*',
  'collection/render/',
  'collection/shape/',
  'collection/*',
  'sql-mode/*',
  'storage/*',
  'ingest/',
  'http/',
  'cli/',
  'demo/',
  'auth/',
  '*',
];

/** Whether a src-relative file sits in a neutral folder (`x/*` means the folder's own files). */
function isNeutral(file: string): boolean {
  return NEUTRAL.some((folder) => {
    if (!folder.endsWith('*')) return file.startsWith(folder);
    const prefix = folder.slice(0, -1);
    return file.startsWith(prefix) && !file.slice(prefix.length).includes('/');
  });
}

/**
 * Every mention of a driver library as a quoted module name in src, (file, library): an import,
 * a re-export, `require` or `createRequire(…)(…)` alike, so no form of loading slips past.
 */
const libraryImports = sourceFiles(SRC).flatMap((file) => {
  const text = readFileSync(file, 'utf8');
  return DRIVER_LIBRARIES.filter((lib) => quotedModule(lib).test(text)).map((library) => ({
    from: relative(SRC, file),
    library,
  }));
});

/** A module name in quotes, or a path inside it (the names hold no pattern characters). */
function quotedModule(library: string): RegExp {
  return new RegExp(`['"]${library}(/[^'"]*)?['"]`);
}

/** Every import edge inside src, as paths relative to src (`storage/duckdb/catalog.ts`). */
const edges = sourceFiles(SRC).flatMap((file) =>
  relativeImports(readFileSync(file, 'utf8')).map((specifier) => ({
    from: relative(SRC, file),
    to: relative(SRC, resolve(dirname(file), specifier)),
  })),
);

function importsOf(fromPrefix: string): Array<{ from: string; to: string }> {
  return edges.filter((e) => e.from.startsWith(fromPrefix));
}

function under(path: string, prefixes: string[]): boolean {
  return prefixes.some((p) => path === p || path.startsWith(p));
}

const FRONT = ['engine.ts', 'index.ts', 'http/', 'cli/'];

describe('module layers', () => {
  it('finds the imports it checks (the parser reads this tree)', () => {
    expect(edges.length).toBeGreaterThan(100);
    expect(
      relativeImports(`import { a } from './a.ts';\nimport type {\n  B,\n} from '../b.ts';`),
    ).toEqual(['./a.ts', '../b.ts']);
    expect(
      relativeImports(`export * from './c.ts'; await import('./d.ts'); require('./e.ts');`),
    ).toEqual(['./c.ts', './d.ts', './e.ts']);
    expect(relativeImports(`import { x } from 'zod'; import './side-effect.ts';`)).toEqual([
      './side-effect.ts',
    ]);
    for (const folder of [
      'collection/plan/',
      'collection/bind/',
      'collection/shape/',
      'collection/duckdb/',
      'collection/clickhouse/',
    ]) {
      expect(
        edges.some((e) => e.from.startsWith(folder)),
        folder,
      ).toBe(true);
    }
    for (const folder of ['sql-mode/duckdb/', 'sql-mode/clickhouse/', 'drivers/']) {
      expect(
        edges.some((e) => e.from.startsWith(folder)),
        folder,
      ).toBe(true);
    }
  });

  it('storage imports neither mode, nor a driver, nor the front', () => {
    const up = importsOf('storage/').filter((e) =>
      under(e.to, ['collection/', 'sql-mode/', 'drivers/', ...FRONT]),
    );
    expect(up).toEqual([]);
  });

  it('storage never imports ingest: ingest sits wholly above it', () => {
    expect(importsOf('storage/').filter((e) => under(e.to, ['ingest/']))).toEqual([]);
  });

  it("no neutral folder imports a driver's library", () => {
    // The check reads the tree it guards: the libraries are imported, and only by drivers' folders.
    const found = libraryImports.map((i) => i.library);
    expect(found).toContain('@duckdb/node-api');
    expect(found).toContain('@clickhouse/client-web');
    expect(quotedModule('chdb').test(`const { query } = require('chdb');`)).toBe(true);
    expect(quotedModule('chdb').test('a comment about `chdb`')).toBe(false);
    expect(isNeutral('sql-mode/shape-sql-result.ts')).toBe(true);
    expect(isNeutral('sql-mode/duckdb/run-sql-query.ts')).toBe(false);
    expect(isNeutral('storage/duckdb/catalog.ts')).toBe(false);
    expect(isNeutral('engine.ts')).toBe(true);
    expect(libraryImports.filter((i) => isNeutral(i.from))).toEqual([]);
  });

  it('the query modes import no driver and no front, and not each other', () => {
    const up = [
      ...importsOf('collection/').filter((e) => under(e.to, ['sql-mode/', 'drivers/', ...FRONT])),
      ...importsOf('sql-mode/').filter((e) => under(e.to, ['collection/', 'drivers/', ...FRONT])),
    ];
    expect(up).toEqual([]);
  });

  it("collection mode's plan, the bound query and the line kinds are driver-independent: they read no storage and no driver's SQL", () => {
    const neutral = edges.filter(
      (e) =>
        e.from.startsWith('collection/plan/') ||
        e.from.startsWith('collection/render/') ||
        /^collection\/[^/]+$/.test(e.from) ||
        /^collection\/bind\/[^/]+$/.test(e.from),
    );
    expect(neutral.some((e) => e.from.startsWith('collection/plan/'))).toBe(true);
    const bound = neutral.filter((e) =>
      under(e.to, [
        'storage/',
        'ingest/',
        'collection/duckdb/',
        'collection/clickhouse/',
        'collection/bind/duckdb/',
        'collection/bind/clickhouse/',
      ]),
    );
    expect(bound).toEqual([]);
  });

  it('the shape stage is one driver-neutral module per family: it imports no storage, no SQL and no driver', () => {
    const shape = importsOf('collection/shape/');
    expect(shape.length).toBeGreaterThan(0);
    const bound = shape.filter(
      (e) =>
        under(e.to, [
          'storage/',
          'ingest/',
          'drivers/',
          'collection/bind/',
          'collection/render/',
        ]) ||
        e.to.includes('/duckdb/') ||
        e.to.includes('/clickhouse/'),
    );
    expect(bound).toEqual([]);
    // Both drivers' lines are shaped by it.
    for (const folder of ['collection/duckdb/', 'collection/clickhouse/']) {
      expect(
        importsOf(folder).some((e) => e.to.startsWith('collection/shape/')),
        folder,
      ).toBe(true);
    }
    // Table/Bar/Pie, Single Value and Samples are shaped by the same module on both drivers.
    for (const module of ['categories-shape.ts', 'single-value-shape.ts', 'samples-shape.ts'])
      for (const folder of ['collection/duckdb/', 'collection/clickhouse/'])
        expect(
          importsOf(folder).some((e) => e.to === `collection/shape/${module}`),
          `${folder} ${module}`,
        ).toBe(true);
  });

  it('render does no I/O: no render file imports a connection, a run or a workspace', () => {
    const io = [
      'storage/duckdb/workspace-db.ts',
      'storage/duckdb/prepared-statements.ts',
      'storage/clickhouse/clickhouse-run.ts',
    ];
    for (const file of io)
      expect(
        edges.some((e) => e.to === file),
        file,
      ).toBe(true);
    const rendering = edges.filter(
      (e) =>
        e.from.startsWith('collection/render/') &&
        (io.includes(e.to) || e.to.startsWith('drivers/')),
    );
    expect(rendering).toEqual([]);
    const awaiting = sourceFiles(join(SRC, 'collection/render'))
      .map((file) => relative(SRC, file))
      .filter((file) => /\bawait\b|\.run\(|\bfetch\(/.test(readFileSync(join(SRC, file), 'utf8')));
    expect(awaiting).toEqual([]);
  });

  it("DuckDB's renderers, one per graph-type family, are pure and write no field or filter SQL: bind writes it, and run-collection-query.ts alone runs statements", () => {
    const run = 'collection/duckdb/run-collection-query.ts';
    const renderers = sourceFiles(join(SRC, 'collection/duckdb'))
      .map((file) => relative(SRC, file))
      .filter((file) => file !== run);
    const families = [
      'collection/duckdb/line-sql.ts',
      'collection/duckdb/categories-sql.ts',
      'collection/duckdb/single-value-sql.ts',
      'collection/duckdb/samples-sql.ts',
    ];
    // The rule reads what it guards: each family's renderer, run by the run stage.
    for (const family of families) {
      expect(renderers, family).toContain(family);
      expect(
        edges.some((e) => e.from === run && e.to === family),
        family,
      ).toBe(true);
    }
    expect(
      edges.some(
        (e) =>
          e.from === 'collection/duckdb/line-sql.ts' &&
          e.to === 'collection/duckdb/aggregate-sql.ts',
      ),
    ).toBe(true);
    const bindSql = ['collection/bind/duckdb/field-sql.ts', 'collection/bind/duckdb/filter-sql.ts'];
    expect(
      edges.filter(
        (e) =>
          renderers.includes(e.from) &&
          (e.to.startsWith('drivers/') ||
            e.to === run ||
            bindSql.includes(e.to) ||
            [
              'storage/duckdb/workspace-db.ts',
              'storage/duckdb/prepared-statements.ts',
              'storage/duckdb/catalog.ts',
              'storage/duckdb/key-typing.ts',
            ].includes(e.to)),
      ),
    ).toEqual([]);
    // No renderer runs or waits for anything, nor spells a field out of its bound spellings or
    // reads the payload itself: a field's SQL is bind's.
    const impure = renderers.filter((file) =>
      /\bawait\b|\basync\b|\.run\(|\breadRows\b|\bnew SqlParams\b|\.spellings\b|\bjson_(extract|type)/.test(
        readFileSync(join(SRC, file), 'utf8'),
      ),
    );
    expect(impure).toEqual([]);
    // Field and filter SQL is written by bind alone.
    const writers = edges.filter(
      (e) => bindSql.includes(e.to) && !e.from.startsWith('collection/bind/'),
    );
    expect(writers).toEqual([]);
    // Statements reach a workspace from the run stage alone.
    const runners = importsOf('collection/').filter(
      (e) =>
        ['storage/duckdb/workspace-db.ts', 'storage/duckdb/prepared-statements.ts'].includes(
          e.to,
        ) && e.from !== run,
    );
    expect(runners).toEqual([]);
  });

  it("ClickHouse's renderers, one per graph-type family, are pure and write no field or filter SQL: bind writes it, and the run stage alone runs statements", () => {
    // The run stage: the dispatch with each family's run and shape, the lines' run, and readRows.
    const runStage = [
      'collection/clickhouse/clickhouse-collection-query.ts',
      'collection/clickhouse/clickhouse-time-series.ts',
      'collection/clickhouse/clickhouse-events.ts',
    ];
    const renderers = sourceFiles(join(SRC, 'collection/clickhouse'))
      .map((file) => relative(SRC, file))
      .filter((file) => !runStage.includes(file));
    const families = {
      'collection/clickhouse/line-sql.ts': 'collection/clickhouse/clickhouse-time-series.ts',
      'collection/clickhouse/categories-sql.ts':
        'collection/clickhouse/clickhouse-collection-query.ts',
      'collection/clickhouse/single-value-sql.ts':
        'collection/clickhouse/clickhouse-collection-query.ts',
      'collection/clickhouse/samples-sql.ts':
        'collection/clickhouse/clickhouse-collection-query.ts',
    };
    // The rule reads what it guards: each family's renderer, run by the run stage.
    for (const [family, run] of Object.entries(families)) {
      expect(renderers, family).toContain(family);
      expect(
        edges.some((e) => e.from === run && e.to === family),
        family,
      ).toBe(true);
      expect(
        edges.some(
          (e) => e.from === family && e.to.startsWith('collection/bind/clickhouse/bind-clickhouse'),
        ),
        family,
      ).toBe(true);
    }
    expect(
      edges.some(
        (e) =>
          e.from === 'collection/clickhouse/categories-sql.ts' &&
          e.to === 'collection/clickhouse/clickhouse-aggregate-sql.ts',
      ),
    ).toBe(true);
    expect(
      edges.filter(
        (e) =>
          renderers.includes(e.from) &&
          (e.to.startsWith('drivers/') ||
            runStage.includes(e.to) ||
            [
              'storage/clickhouse/clickhouse-run.ts',
              'storage/clickhouse/clickhouse-key-columns.ts',
              'collection/bind/clickhouse/clickhouse-fields.ts',
            ].includes(e.to)),
      ),
    ).toEqual([]);
    // No renderer runs or waits for anything, nor spells a field out of its bound spellings or
    // reads the payload itself: a field's SQL is bind's.
    const impure = renderers.filter((file) =>
      /\bawait\b|\basync\b|\.query\(|\bfetch\(|\breadRows\b|\.spellings\b|\bJSON(Extract|Type)/.test(
        readFileSync(join(SRC, file), 'utf8'),
      ),
    );
    expect(impure).toEqual([]);
    // Statements reach ClickHouse from the run stage alone.
    const runners = importsOf('collection/').filter(
      (e) =>
        e.to === 'storage/clickhouse/clickhouse-run.ts' &&
        !runStage.includes(e.from) &&
        !e.from.startsWith('collection/bind/'),
    );
    expect(runners).toEqual([]);
  });

  it('on ClickHouse only bind writes field and filter SQL', () => {
    const fields = 'collection/bind/clickhouse/clickhouse-fields.ts';
    expect(
      edges.some((e) => e.from.startsWith('collection/bind/clickhouse/') && e.to === fields),
    ).toBe(true);
    const writers = edges.filter(
      (e) => e.to === fields && !e.from.startsWith('collection/bind/clickhouse/'),
    );
    expect(writers).toEqual([]);
    // Nor may a file call them without importing them by name (a re-export, a namespace).
    const callers = sourceFiles(join(SRC, 'collection'))
      .map((file) => relative(SRC, file))
      .filter((file) => !file.startsWith('collection/bind/'))
      .filter((file) =>
        /\b(numericFieldSql|stringFieldSql|filtersSql|inWindow)\(/.test(
          readFileSync(join(SRC, file), 'utf8'),
        ),
      );
    expect(callers).toEqual([]);
  });

  it('in collection mode only bind reads the catalog and the key typing', () => {
    const binding = [
      'storage/duckdb/catalog.ts',
      'storage/duckdb/key-typing.ts',
      'storage/clickhouse/clickhouse-key-columns.ts',
    ];
    // The rule guards something: bind reads each of them.
    for (const file of binding) {
      expect(
        importsOf('collection/bind/').some((e) => e.to === file),
        file,
      ).toBe(true);
    }
    const readers = importsOf('collection/').filter(
      (e) => binding.includes(e.to) && !e.from.startsWith('collection/bind/'),
    );
    expect(readers).toEqual([]);
    // Nor may a renderer reach them through a value it was handed (the workspace, a run).
    const lookup = /\bcatalog\.(get|fields|lookup)\(|\bcolumns\??\.(column\(|bases\b)/;
    const readingFiles = sourceFiles(join(SRC, 'collection'))
      .map((file) => relative(SRC, file))
      .filter((file) => lookup.test(readFileSync(join(SRC, file), 'utf8')));
    // The pattern reads what it guards: each driver's bind reads its catalog through it.
    expect(readingFiles).toContain('collection/bind/duckdb/bind-duckdb-query.ts');
    expect(readingFiles).toContain('collection/bind/clickhouse/bind-clickhouse-query.ts');
    expect(readingFiles.filter((file) => !file.startsWith('collection/bind/'))).toEqual([]);
  });

  it("each driver's SQL stays with its own storage", () => {
    const crossed = [
      ...edges.filter((e) => e.from.includes('/duckdb/') && e.to.includes('/clickhouse/')),
      ...edges.filter((e) => e.from.includes('/clickhouse/') && e.to.includes('/duckdb/')),
    ];
    expect(crossed).toEqual([]);
  });

  it('drivers are reached only through the front', () => {
    const sideways = edges.filter(
      (e) => e.to.startsWith('drivers/') && !e.from.startsWith('drivers/') && !under(e.from, FRONT),
    );
    expect(sideways).toEqual([]);
  });
});
