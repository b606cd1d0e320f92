import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkspaceDb } from '../storage/duckdb/workspace-db.ts';
import { stagedRelation } from './event-records.ts';
import { ChunkBuffers, fileChunks } from './file-chunks.ts';
import { LoadWriters } from './load-writers.ts';
import type { ParsedChunk } from './ndjson-chunk.ts';
import { defaultParseWorkers, NdjsonParsers } from './ndjson-parsers.ts';
import type { BadLine } from './parse-ndjson.ts';
import type { StagedLoad } from './staged-load.ts';

/** Progress of a load, reported after every chunk. */
export interface LoadProgress {
  bytesRead: number;
  totalBytes: number;
  events: number;
  badLines: number;
}

/** How a file is loaded. */
export interface LoadOptions {
  /** Called with each bad line, in file order. */
  onBadLine?: (bad: BadLine) => void;
  onProgress?: (progress: LoadProgress) => void;
  /** Bytes read and parsed at a time (default 16 MiB). */
  chunkBytes?: number;
  /** Events per transaction, at least (default four DuckDB row groups, 491,520). */
  commitEvents?: number;
  /** Parse worker threads (default one per core, at most four; 0 parses on this thread). */
  workers?: number;
  /**
   * Parse workers started by the caller (who closes them), so that their start-up overlaps
   * opening the database; `workers` is then ignored.
   */
  parsers?: NdjsonParsers;
  /** DuckDB connections appending at once (default 2; see `LoadWriters`). */
  writers?: number;
  /**
   * Leave the checked events in their staged files, taken by this instead of appended, for one
   * statement to type and order them into the collection afterwards; the collection's schema
   * still grows as they need. The staged files stay until the caller removes the staging
   * directory.
   */
  staged?: StagedLoad;
}

/** What a load did. */
export interface LoadResult {
  events: number;
  badLines: number;
}

/**
 * Events a load's transaction spans at least, so that nearly all of them reach the file as whole
 * row groups written compressed (four of DuckDB's default row groups, more of the engine's).
 */
const COMMIT_EVENTS = 4 * 122_880;

/**
 * Loads an NDJSON file (`{"timestamp": <unix s>, "json": {…}}` a line) into a collection of a
 * database opened with a `stagingDir`. The file is read in chunks cut at line ends. Parse
 * workers check each chunk's lines with the HTTP endpoints' rules (bad lines come back with
 * their numbers and reasons), discover its keys and stage its good events in a file; DuckDB
 * reads that file with its CSV reader and types and appends the events (see
 * {@link stagedRelation}) while the workers parse the next chunks, on two connections at once
 * (see {@link LoadWriters}). A transaction spans at least `commitEvents` events: DuckDB writes
 * whole row groups of a large transaction straight to the database file, compressed, while
 * small ones go through the WAL and are compressed again at the next checkpoint, about three
 * times the work. Rows keep the file's order, and a load that fails or is stopped keeps what it
 * committed, a prefix of the file's good lines (with `staged`, nothing until it is appended).
 */
export async function loadNdjson(
  db: WorkspaceDb,
  collection: string,
  file: string,
  options: LoadOptions = {},
): Promise<LoadResult> {
  const stagingDir = db.stagingDir;
  if (!stagingDir) throw new Error('loadNdjson needs a database opened with a stagingDir');
  const handle = await open(file, 'r');
  const totalBytes = (await handle.stat()).size;
  const parsers = options.parsers ?? new NdjsonParsers(options.workers ?? defaultParseWorkers());
  const staged: string[] = [];
  const result: LoadResult = { events: 0, badLines: 0 };
  let writers: LoadWriters | undefined;
  try {
    const { staged: keep } = options;
    writers = keep
      ? undefined
      : await LoadWriters.open(db, collection, {
          writers: options.writers ?? 2,
          commitEvents: options.commitEvents ?? COMMIT_EVENTS,
        });
    const appender = writers;
    const buffers = new ChunkBuffers(options.chunkBytes ?? 16 * 1024 * 1024);
    let line = 1;
    const take = async ({ chunk, bytesRead, file: stagedFile }: InFlight) => {
      const parsed = await chunk;
      buffers.give(parsed.buffer);
      for (const bad of parsed.bad) {
        options.onBadLine?.({ line: line + bad.line - 1, reason: bad.reason });
      }
      line += parsed.lines;
      result.badLines += parsed.bad.length;
      if (parsed.events > 0 && keep) {
        await keep.add({
          keys: parsed.keys,
          events: parsed.events,
          file: stagedFile,
          longest: parsed.longest,
          bytes: parsed.bytes,
        });
        result.events += parsed.events;
      } else if (parsed.events > 0 && appender) {
        await appender.append({
          keys: parsed.keys,
          events: parsed.events,
          source: (params) => stagedRelation(stagedFile, parsed.longest, params),
          appended: () => rm(stagedFile, { force: true }),
        });
        result.events += parsed.events;
      }
      options.onProgress?.({
        bytesRead: Math.min(bytesRead, totalBytes),
        totalBytes,
        events: result.events,
        badLines: result.badLines,
      });
    };
    // Up to one chunk per worker is parsed while the oldest is handed to the writers.
    const inFlight: InFlight[] = [];
    let id = 0;
    for await (const { bytes, bytesRead } of fileChunks(handle, buffers)) {
      const stagedFile = join(stagingDir, `chunk-${id}.csv`);
      staged.push(stagedFile);
      const chunk = parsers.parse({ id: id++, bytes, file: stagedFile });
      // Chunks abandoned after a failure must not surface as unhandled rejections.
      chunk.catch(() => undefined);
      inFlight.push({ chunk, bytesRead, file: stagedFile });
      if (inFlight.length > parsers.count) await take(inFlight.shift() as InFlight);
    }
    for (let next = inFlight.shift(); next; next = inFlight.shift()) await take(next);
    await writers?.finish();
    return result;
  } finally {
    await writers?.close();
    if (!options.parsers) await parsers.close();
    await handle.close();
    if (!options.staged) await Promise.all(staged.map((f) => rm(f, { force: true })));
  }
}

interface InFlight {
  chunk: Promise<ParsedChunk>;
  bytesRead: number;
  file: string;
}
