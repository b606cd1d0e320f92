import { open } from 'node:fs/promises';
import type { WorkspaceDb } from '../storage/workspace-db.ts';
import { appendRecords, type BadLine } from './append-events.ts';
import { parseNdjsonLines } from './parse-ndjson.ts';
import { discoverObjectKeys } from './type-keys.ts';

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
  /** Bytes handed to DuckDB at a time (default 32 MiB); each chunk is one transaction. */
  chunkBytes?: number;
}

/** What a load did. */
export interface LoadResult {
  events: number;
  badLines: number;
}

const NEWLINE = 0x0a;

/**
 * Loads an NDJSON file (`{"timestamp": <unix s>, "json": {…}}` a line) into a collection. The
 * file is read in large chunks cut at line ends; each chunk's lines are checked and parsed here
 * (bad lines come back with their numbers and reasons) and its good events are typed and
 * appended by DuckDB in one transaction, so they are durable chunk by chunk. Parsing the next
 * chunk overlaps DuckDB's work on the current one.
 */
export async function loadNdjson(
  db: WorkspaceDb,
  collection: string,
  file: string,
  options: LoadOptions = {},
): Promise<LoadResult> {
  const handle = await open(file, 'r');
  try {
    const totalBytes = (await handle.stat()).size;
    const chunkBytes = options.chunkBytes ?? 32 * 1024 * 1024;
    let position = 0;
    let carry = Buffer.alloc(0);
    let line = 1;
    const result: LoadResult = { events: 0, badLines: 0 };

    const readChunk = async (): Promise<{ text: string; lines: number } | null> => {
      const buffer = Buffer.allocUnsafe(chunkBytes);
      const { bytesRead } = await handle.read(buffer, 0, chunkBytes, position);
      position += bytesRead;
      let data = carry.length
        ? Buffer.concat([carry, buffer.subarray(0, bytesRead)])
        : buffer.subarray(0, bytesRead);
      if (bytesRead > 0) {
        const cut = data.lastIndexOf(NEWLINE);
        if (cut === -1) {
          carry = Buffer.from(data);
          return readChunk();
        }
        carry = Buffer.from(data.subarray(cut + 1));
        data = data.subarray(0, cut + 1);
      } else {
        carry = Buffer.alloc(0);
        if (data.length === 0) return null;
      }
      let lines = 0;
      for (let i = data.indexOf(NEWLINE); i !== -1; i = data.indexOf(NEWLINE, i + 1)) lines++;
      if (data[data.length - 1] !== NEWLINE) lines++;
      let text = data.toString('utf8');
      if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      return { text, lines };
    };

    let writing: Promise<void> = Promise.resolve();
    for (let chunk = await readChunk(); chunk; chunk = await readChunk()) {
      const parsed = parseNdjsonLines(chunk.text, line);
      line += chunk.lines;
      const keys = discoverObjectKeys(parsed.records.map((r) => r.json ?? {}));
      const bytesRead = Math.min(position, totalBytes);
      // The previous chunk's write has run on DuckDB's threads while this one was parsed.
      await writing;
      for (const b of parsed.bad) options.onBadLine?.(b);
      result.badLines += parsed.bad.length;
      writing = db
        .write(async (tx) =>
          parsed.records.length
            ? appendRecords(tx.conn, await tx.collection(collection), parsed.records, keys)
            : 0,
        )
        .then((written) => {
          result.events += written;
          options.onProgress?.({
            bytesRead,
            totalBytes,
            events: result.events,
            badLines: result.badLines,
          });
        });
    }
    await writing;
    return result;
  } finally {
    await handle.close();
  }
}
