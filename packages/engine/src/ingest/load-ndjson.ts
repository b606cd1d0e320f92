import { type FileHandle, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkspaceDb } from '../storage/workspace-db.ts';
import { stagedRelation } from './event-records.ts';
import type { ParsedChunk } from './ndjson-chunk.ts';
import { defaultParseWorkers, NdjsonParsers } from './ndjson-parsers.ts';
import type { BadLine } from './parse-ndjson.ts';
import { addKeyColumns, insertEvents } from './type-keys.ts';

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
}

/** What a load did. */
export interface LoadResult {
  events: number;
  badLines: number;
}

/** DuckDB's row group: whole row groups of a large transaction are written compressed. */
const ROW_GROUP = 122_880;
const NEWLINE = 0x0a;

/**
 * Loads an NDJSON file (`{"timestamp": <unix s>, "json": {…}}` a line) into a collection of a
 * database opened with a `stagingDir`. The file is read in chunks cut at line ends. Parse
 * workers check each chunk's lines with the HTTP endpoints' rules (bad lines come back with
 * their numbers and reasons), discover its keys and stage its good events in a file; DuckDB
 * reads that file with its CSV reader and types and appends the events (see
 * {@link stagedRelation}) while the workers parse the next chunks. A transaction spans at least
 * `commitEvents` events: DuckDB writes whole row groups of a large transaction straight to the
 * database file, compressed, while small ones go through the WAL and are compressed again at
 * the next checkpoint, about three times the work.
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
  const commitEvents = options.commitEvents ?? 4 * ROW_GROUP;
  const staged: string[] = [];
  const result: LoadResult = { events: 0, badLines: 0 };
  try {
    await db.write(async (tx) => {
      let line = 1;
      let uncommitted = 0;
      const take = async ({ chunk, bytesRead, file: stagedFile }: InFlight) => {
        const parsed = await chunk;
        for (const bad of parsed.bad) {
          options.onBadLine?.({ line: line + bad.line - 1, reason: bad.reason });
        }
        line += parsed.lines;
        result.badLines += parsed.bad.length;
        if (parsed.events > 0) {
          const draft = await tx.collection(collection);
          await addKeyColumns(tx.conn, draft, parsed.keys);
          const written = await insertEvents(tx.conn, draft, (params) =>
            stagedRelation(stagedFile, parsed.longest, params),
          );
          await rm(stagedFile, { force: true });
          result.events += written;
          uncommitted += written;
          if (uncommitted >= commitEvents) {
            await tx.commit();
            uncommitted = 0;
          }
        }
        options.onProgress?.({
          bytesRead: Math.min(bytesRead, totalBytes),
          totalBytes,
          events: result.events,
          badLines: result.badLines,
        });
      };
      // Up to one chunk per worker is parsed while DuckDB appends the oldest.
      const inFlight: InFlight[] = [];
      let id = 0;
      for await (const { bytes, bytesRead } of fileChunks(handle, options.chunkBytes)) {
        const stagedFile = join(stagingDir, `chunk-${id}.csv`);
        staged.push(stagedFile);
        const chunk = parsers.parse({ id: id++, bytes, file: stagedFile });
        // Chunks abandoned after a failure must not surface as unhandled rejections.
        chunk.catch(() => undefined);
        inFlight.push({ chunk, bytesRead, file: stagedFile });
        if (inFlight.length > parsers.count) await take(inFlight.shift() as InFlight);
      }
      for (let next = inFlight.shift(); next; next = inFlight.shift()) await take(next);
    });
    return result;
  } finally {
    if (!options.parsers) await parsers.close();
    await handle.close();
    await Promise.all(staged.map((f) => rm(f, { force: true })));
  }
}

interface InFlight {
  chunk: Promise<ParsedChunk>;
  bytesRead: number;
  file: string;
}

/**
 * The file in chunks of whole lines (a line longer than a chunk is read whole), with the byte
 * order mark at its start dropped. The first chunks are small and grow to `chunkBytes`, so that
 * DuckDB gets its first events soon instead of waiting for a whole chunk to be parsed.
 */
async function* fileChunks(
  handle: FileHandle,
  chunkBytes = 16 * 1024 * 1024,
): AsyncGenerator<{ bytes: Uint8Array; bytesRead: number }> {
  let position = 0;
  let carry: Buffer = Buffer.alloc(0);
  let size = Math.min(chunkBytes, 1024 * 1024);
  for (; ; size = Math.min(chunkBytes, size * 2)) {
    const buffer = Buffer.allocUnsafe(size);
    const { bytesRead } = await handle.read(buffer, 0, size, position);
    let data = carry.length
      ? Buffer.concat([carry, buffer.subarray(0, bytesRead)])
      : buffer.subarray(0, bytesRead);
    if (position === 0 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) {
      data = data.subarray(3);
    }
    position += bytesRead;
    if (bytesRead === 0) {
      if (data.length > 0) yield { bytes: data, bytesRead: position };
      return;
    }
    const cut = data.lastIndexOf(NEWLINE);
    if (cut === -1) {
      carry = Buffer.from(data);
      continue;
    }
    carry = Buffer.from(data.subarray(cut + 1));
    yield { bytes: data.subarray(0, cut + 1), bytesRead: position };
  }
}
