import { closeSync, openSync, writeSync } from 'node:fs';
import { CompactLineScanner } from './compact-line.ts';
import { KeyDiscovery, type SeenKey } from './discover-keys.ts';
import { stagedRecord } from './event-records.ts';
import { type BadLine, parseNdjsonLines } from './parse-ndjson.ts';

/**
 * One chunk of an NDJSON file on its way into DuckDB: its lines checked and parsed, its keys
 * discovered, its good events staged in a file for DuckDB's CSV reader. Runs in the loader's
 * parse workers (see `ndjson-worker.ts`), so it imports neither DuckDB nor zod.
 */

/** A chunk to parse: whole lines of the file, and where to stage its good events. */
export interface ChunkJob {
  id: number;
  bytes: Uint8Array;
  file: string;
}

/** What parsing a chunk found. Line numbers count from 1 at the chunk's first line. */
export interface ParsedChunk {
  id: number;
  /** Lines in the chunk, blank ones included. */
  lines: number;
  /** Good events, staged in the job's file (written only when there are any). */
  events: number;
  /** The longest staged payload, in UTF-16 units. */
  longest: number;
  bad: BadLine[];
  keys: SeenKey[];
}

/** Staged records are written out this many at a time, so their text dies young. */
const WRITE_EVERY = 2048;

/** Parses a chunk and stages its good events. */
export function parseChunk(job: ChunkJob): ParsedChunk {
  const { bytes } = job;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  const discovery = new KeyDiscovery();
  let events = 0;
  let longest = 0;
  let staged = '';
  let fd: number | undefined;
  try {
    const { bad, lines } = parseNdjsonLines(text, 1, (timestamp, payload, keys) => {
      if (keys instanceof CompactLineScanner) discovery.addScanned(keys);
      else discovery.add(keys);
      if (payload.length > longest) longest = payload.length;
      staged += stagedRecord(timestamp, payload);
      if (++events % WRITE_EVERY === 0) {
        fd ??= openSync(job.file, 'w');
        writeAll(fd, staged);
        staged = '';
      }
    });
    if (staged) {
      fd ??= openSync(job.file, 'w');
      writeAll(fd, staged);
    }
    return { id: job.id, lines, events, longest, bad, keys: discovery.keys };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Writes all of `text` (a single write may take only part of it). */
function writeAll(fd: number, text: string): void {
  const bytes = Buffer.from(text);
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done);
}
