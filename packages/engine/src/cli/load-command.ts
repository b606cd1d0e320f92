import { rmSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_COLLECTION } from '@analytics-chart/protocol/vocabulary';
import type { ClickHouseOptions } from '../drivers/clickhouse/clickhouse-driver.ts';
import { defaultParseWorkers, NdjsonParsers } from '../ingest/ndjson-parsers.ts';
import type { StagedLoad } from '../ingest/staged-load.ts';
import type { WorkspaceDb } from '../storage/duckdb/workspace-db.ts';
import type { RollupSpec } from '../storage/rollup-spec.ts';
import { ProgressBar } from './progress-bar.ts';
import { resolveUserPath } from './resolve-path.ts';
import { rollupsOption } from './rollup-options.ts';
import { stringOption, UsageError, workspaceOption } from './usage-error.ts';

/** Bad lines printed one by one; beyond this only their count. */
const SHOWN_BAD_LINES = 100;
/**
 * DuckDB's memory limit for a clustered load: DuckDB keeps the blocks it writes cached up to its
 * limit, which the machine's other work needs more; the sort spills to disk beyond it.
 */
const CLUSTERED_MEMORY = '1GB';

/**
 * What a load shows while it runs, the same into DuckDB and ClickHouse: the first
 * {@link SHOWN_BAD_LINES} bad lines on stderr, a progress bar with events per second, and at the
 * end how many bad lines were not shown.
 */
function loadReport() {
  const bar = new ProgressBar();
  const started = performance.now();
  let shown = 0;
  return {
    bar,
    started,
    onBadLine({ line, reason }: { line: number; reason: string }) {
      if (shown++ >= SHOWN_BAD_LINES) return;
      bar.clear();
      process.stderr.write(`line ${line}: ${reason}\n`);
    },
    onProgress(p: { events: number; bytesRead: number; totalBytes: number }) {
      const seconds = (performance.now() - started) / 1000;
      bar.update(
        p.totalBytes ? p.bytesRead / p.totalBytes : 1,
        `${p.events.toLocaleString('en-US')} events, ${Math.round(p.events / Math.max(seconds, 0.001)).toLocaleString('en-US')}/s`,
      );
    },
    end(badLines: number) {
      bar.clear();
      if (badLines > SHOWN_BAD_LINES) {
        process.stderr.write(`… and ${badLines - SHOWN_BAD_LINES} more bad lines\n`);
      }
    },
  };
}

/**
 * `load FILE`: loads NDJSON into a collection. Bad lines go to stderr with their number and
 * reason (the first 100, then a count); the good ones are loaded; the exit code is 1 when any
 * line was bad. Unless `--no-cluster`, the checked events stay in the loader's staged files and
 * go into the collection in one statement and one transaction, ordered by the key that tells
 * them apart, or by `--cluster-by KEY` (`ingest/staged-load.ts`, `storage/duckdb/cluster-rows.ts`).
 * Ends with the count on stdout.
 */
export async function loadCommand(
  options: Record<string, string | boolean | undefined>,
  positionals: string[],
): Promise<number> {
  if (positionals.length !== 1) throw new UsageError('load expects exactly one FILE');
  // Usage mistakes first, before any file is read.
  const dataDir = resolveUserPath(stringOption(options.data, '.data'));
  const workspace = workspaceOption(options.workspace);
  const collection = stringOption(options.collection, DEFAULT_COLLECTION);
  for (const flag of ['clickhouse-sort-field', 'clickhouse-key-columns', 'clickhouse-wait']) {
    if (options[flag] !== undefined && options.clickhouse === undefined) {
      throw new UsageError(`--${flag} needs --clickhouse URL`);
    }
  }
  const rollups = rollupsOption(options);
  const file = resolveUserPath(positionals[0] as string);
  const size = await stat(file).then(
    (s) => s.size,
    () => {
      throw new Error(`cannot read ${file}`);
    },
  );
  if (options.clickhouse !== undefined) {
    // Imported only here: the DuckDB load below must not wait for the server's modules.
    const { clickhouseFrom, withClickHouseKeys } = await import('./serve-command.ts');
    const clickhouse = withClickHouseKeys(options, clickhouseFrom(options)) as ClickHouseOptions;
    if (options['cluster-by'] !== undefined || options['no-cluster'] !== undefined) {
      throw new UsageError('--cluster-by and --no-cluster order DuckDB files, not ClickHouse');
    }
    return loadClickHouse(file, size, clickhouse, workspace, collection, rollups);
  }
  // The loader stages checked events in a directory of its own that only it may read from SQL.
  const stagingDir = await mkdtemp(join(tmpdir(), 'analytics-engine-load-'));
  // Stopped by a signal, the load still removes its staged files, then dies of the signal as
  // before (committed events stay).
  const onSignal = (signal: NodeJS.Signals) => {
    rmSync(stagingDir, { recursive: true, force: true });
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // Started first, before DuckDB and the protocol's schemas are even loaded: the workers'
  // start-up (a few hundred milliseconds, each loads TypeScript) overlaps loading and opening
  // the database. This module imports nothing heavy for the same reason.
  const parsers = new NdjsonParsers(defaultParseWorkers());
  let db: WorkspaceDb | undefined;
  let loadNdjson: typeof import('../ingest/load-ndjson.ts').loadNdjson;
  let openWorkspaceFile: typeof import('./open-workspace-file.ts').openWorkspaceFile;
  let staged: StagedLoad | undefined;
  try {
    const [loader, opener, stagedModule] = await Promise.all([
      import('../ingest/load-ndjson.ts'),
      import('./open-workspace-file.ts'),
      import('../ingest/staged-load.ts'),
    ]);
    loadNdjson = loader.loadNdjson;
    openWorkspaceFile = opener.openWorkspaceFile;
    // Clustered, DuckDB idles while the workers check and stage the file, then types and sorts
    // it in one statement on the usual threads. Unclustered, one DuckDB thread: the typed insert
    // reads each staged file on one thread anyway (see loadNdjson), and an idle second one only
    // competes with the parse workers for the cores.
    const cluster = options['no-cluster'] !== true;
    db = await openWorkspaceFile(dataDir, workspace, {
      stagingDir,
      ...(rollups !== undefined ? { rollups } : {}),
      ...(cluster ? { memoryLimit: CLUSTERED_MEMORY } : { threads: 1 }),
    });
    if (cluster) staged = new stagedModule.StagedLoad(db, collection);
  } catch (error) {
    await db?.close();
    await parsers.close();
    await rm(stagingDir, { recursive: true, force: true });
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    throw error;
  }
  const report = loadReport();
  const { bar, started } = report;
  try {
    const result = await loadNdjson(db, collection, file, {
      parsers,
      ...(staged ? { staged } : {}),
      onBadLine: report.onBadLine,
      onProgress: report.onProgress,
    });
    report.end(result.badLines);
    const loadedAt = performance.now();
    let clustered = '';
    if (staged && result.events > 0) {
      const { appendStaged } = await import('../storage/duckdb/cluster-rows.ts');
      const field = typeof options['cluster-by'] === 'string' ? options['cluster-by'] : undefined;
      const segments = await appendStaged(
        db,
        collection,
        staged.segments(),
        field === undefined ? {} : { field },
      );
      const named = (list: typeof segments) =>
        [...new Set(list.map((s) => s.field).filter((f) => f !== null))].map((f) => `'${f}'`);
      const byKey = named(segments.filter((s) => !s.byTime));
      const byTime = named(segments.filter((s) => s.byTime));
      const rewritten = segments.some((s) => s.rewritten)
        ? ', the whole table rewritten in one time order'
        : '';
      const order = [
        ...(byKey.length ? [`by ${byKey.join(', ')} and time`] : []),
        ...(byTime.length ? [`by time (the rollups keep ${byTime.join(', ')})${rewritten}`] : []),
      ];
      clustered = order.length
        ? `; rows ordered ${order.join(', ')} in ${((performance.now() - loadedAt) / 1000).toFixed(1)} s`
        : '';
    }
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(
      `loaded ${result.events.toLocaleString('en-US')} events into ${workspace}/${collection} ` +
        `(${join(dataDir, `${workspace}.duckdb`)}) in ${seconds.toFixed(1)} s` +
        (result.badLines ? `; ${result.badLines.toLocaleString('en-US')} bad lines skipped` : '') +
        clustered +
        ` [${(size / 1e6).toFixed(1)} MB read]\n`,
    );
    return result.badLines > 0 ? 1 : 0;
  } finally {
    bar.clear();
    await parsers.close();
    await db?.close();
    await rm(stagingDir, { recursive: true, force: true });
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * `load --clickhouse URL FILE`: the same checks, bad-line report, progress bar, summary and exit
 * code as into DuckDB, written through the ClickHouse driver's ingest
 * (`drivers/load-into-clickhouse.ts`).
 */
async function loadClickHouse(
  file: string,
  size: number,
  clickhouse: ClickHouseOptions,
  workspace: string,
  collection: string,
  rollups: RollupSpec | true | undefined,
): Promise<number> {
  const { loadIntoClickHouse } = await import('../drivers/load-into-clickhouse.ts');
  const report = loadReport();
  const { bar, started } = report;
  try {
    const result = await loadIntoClickHouse(file, clickhouse, workspace, collection, {
      onBadLine: report.onBadLine,
      onProgress: report.onProgress,
      ...(rollups ? { rollups } : {}),
    });
    report.end(result.badLines);
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(
      `loaded ${result.events.toLocaleString('en-US')} events into ${workspace}/${collection} ` +
        `(ClickHouse) in ${seconds.toFixed(1)} s` +
        (result.badLines ? `; ${result.badLines.toLocaleString('en-US')} bad lines skipped` : '') +
        ` [${(size / 1e6).toFixed(1)} MB read]\n`,
    );
    return result.badLines > 0 ? 1 : 0;
  } finally {
    bar.clear();
  }
}
