import { closeSync, openSync, writeSync } from 'node:fs';
import type { CompactLineScanner } from './compact-line.ts';
import { KeyDiscovery, type SeenKey } from './discover-keys.ts';
import { STAGED_QUOTE, STAGED_SEPARATOR } from './event-records.ts';
import { type BadLine, parseNdjsonLines } from './parse-ndjson.ts';

/**
 * One chunk of an NDJSON file on its way into DuckDB: its lines checked and parsed, its keys
 * discovered, its good events staged in a file for DuckDB's CSV reader. Runs in the loader's
 * parse workers (see `ndjson-worker.ts`), so it imports neither DuckDB nor zod.
 */

/**
 * A chunk to parse: whole lines of the file, and where to stage its good events. A worker takes
 * over the buffer `bytes` views (it is transferred, not copied) and hands it back in
 * {@link ParsedChunk.buffer}.
 */
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
  /** The longest staged payload, in UTF-8 bytes. */
  longest: number;
  bad: BadLine[];
  keys: SeenKey[];
  /** The buffer the job's bytes were in, handed back for the next chunk. */
  buffer?: ArrayBuffer;
}

/**
 * Parses a chunk and stages its good events (see `stagedRelation` for the format). Staged
 * records are assembled as bytes in `StagingBuffer`: a fast-path line's timestamp digits and
 * payload are copied from the chunk as they are, so its text is never decoded or encoded.
 */
export function parseChunk(job: ChunkJob): ParsedChunk {
  const { bytes } = job;
  const discovery = new KeyDiscovery();
  const out = staging;
  out.reset();
  let events = 0;
  let longest = 0;
  const { bad, lines } = parseNdjsonLines(bytes, 1, {
    scanned(scanner: CompactLineScanner) {
      discovery.addScanned(scanner);
      const { payloadStart, payloadEnd, timestampStart, timestampEnd } = scanner;
      if (payloadEnd - payloadStart > longest) longest = payloadEnd - payloadStart;
      if (timestampStart >= 0) out.copy(bytes, timestampStart, timestampEnd);
      else out.text(String(scanner.timestamp));
      out.copyQuoted(bytes, payloadStart, payloadEnd);
      events++;
    },
    parsed(timestamp, payload, json) {
      discovery.add(json);
      out.text(String(timestamp));
      const length = out.quotedText(payload);
      if (length > longest) longest = length;
      events++;
    },
  });
  if (events > 0) out.writeTo(job.file);
  return {
    id: job.id,
    lines,
    events,
    longest,
    bad,
    keys: discovery.keys,
    buffer: bytes.buffer as ArrayBuffer,
  };
}

/**
 * The bytes of a chunk's staged records, one buffer per thread reused from chunk to chunk
 * (written to its file before the next chunk starts), grown when a chunk needs more.
 */
class StagingBuffer {
  #buffer = Buffer.allocUnsafe(1 << 20);
  #length = 0;

  reset(): void {
    this.#length = 0;
  }

  #room(bytes: number): Buffer {
    if (this.#length + bytes > this.#buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.#buffer.length * 2, this.#length + bytes));
      this.#buffer.copy(grown, 0, 0, this.#length);
      this.#buffer = grown;
    }
    return this.#buffer;
  }

  /** Appends ASCII text (a timestamp). */
  text(text: string): void {
    const buffer = this.#room(text.length);
    this.#length += buffer.write(text, this.#length, 'latin1');
  }

  copy(from: Uint8Array, start: number, end: number): void {
    const buffer = this.#room(end - start);
    buffer.set(from.subarray(start, end), this.#length);
    this.#length += end - start;
  }

  /** Appends the separator, `from[start, end)` quoted, and the line end. */
  copyQuoted(from: Uint8Array, start: number, end: number): void {
    const buffer = this.#room(end - start + 4);
    let at = this.#length;
    buffer[at++] = SEPARATOR;
    buffer[at++] = QUOTE;
    buffer.set(from.subarray(start, end), at);
    at += end - start;
    buffer[at++] = QUOTE;
    buffer[at++] = NEWLINE;
    this.#length = at;
  }

  /** Appends the separator, `text` quoted, and the line end; returns `text`'s UTF-8 length. */
  quotedText(text: string): number {
    const buffer = this.#room(text.length * 3 + 4);
    let at = this.#length;
    buffer[at++] = SEPARATOR;
    buffer[at++] = QUOTE;
    const written = buffer.write(text, at, 'utf8');
    at += written;
    buffer[at++] = QUOTE;
    buffer[at++] = NEWLINE;
    this.#length = at;
    return written;
  }

  /** Writes the records to `file` (a single write may take only part of them). */
  writeTo(file: string): void {
    const fd = openSync(file, 'w');
    try {
      for (let done = 0; done < this.#length; ) {
        done += writeSync(fd, this.#buffer, done, this.#length - done);
      }
    } finally {
      closeSync(fd);
    }
  }
}

const SEPARATOR = STAGED_SEPARATOR.charCodeAt(0);
const QUOTE = STAGED_QUOTE.charCodeAt(0);
const NEWLINE = 0x0a;

const staging = new StagingBuffer();
