import { closeSync, openSync, writeSync } from 'node:fs';
import {
  type FormColumns,
  formColumnsAllowed,
  formColumnsOf,
  MAX_KEY_COLUMNS,
  TsvRowWriter,
} from '../storage/clickhouse/clickhouse-rows.ts';
import { type CompactLineScanner, utf8 } from './compact-line.ts';
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
  /** Set for a load into ClickHouse: the good events come back as an insert's text instead. */
  clickhouse?: ClickHouseChunk;
}

/** What a chunk bound for ClickHouse needs: its collection and the first `seq` it may use. */
export interface ClickHouseChunk {
  collection: string;
  /** Decimal text of a 64-bit integer; the chunk's events take it and the numbers after it. */
  seqBase: string;
  /** The top-level keys whose paths have columns, where the workspace types only some. */
  keys?: readonly string[];
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
  /** The staged file's size in bytes (0 when nothing was staged). */
  bytes: number;
  bad: BadLine[];
  keys: SeenKey[];
  /** The buffer the job's bytes were in, handed back for the next chunk. */
  buffer?: ArrayBuffer;
  /** For a ClickHouse chunk: its good events as `TabSeparatedWithNames` text (`tsvRows`). */
  tsv?: string;
}

/**
 * Parses a chunk and stages its good events (see `stagedRelation` for the format). Staged
 * records are assembled as bytes in `StagingBuffer`: a fast-path line's timestamp digits and
 * payload are copied from the chunk as they are, so its text is never decoded or encoded.
 */
export function parseChunk(job: ChunkJob): ParsedChunk {
  if (job.clickhouse) return parseClickHouseChunk(job, job.clickhouse);
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
    bytes: events > 0 ? out.length : 0,
    bad,
    keys: discovery.keys,
    buffer: bytes.buffer as ArrayBuffer,
  };
}

/**
 * Parses a chunk for ClickHouse: the same checks and key discovery, and its good events as the
 * text of one insert with the form columns of the chunk's key paths computed here, in the
 * worker, so the main thread only sends it.
 */
function parseClickHouseChunk(job: ChunkJob, target: ClickHouseChunk): ParsedChunk {
  const { bytes } = job;
  const discovery = new KeyDiscovery();
  const { collection } = target;
  // The insert's header names the chunk's form columns, known once every line is checked: the
  // scan keeps only where each event is (no string per event), and the rows are written after.
  const found = events;
  found.length = 0;
  const slow: Array<{ payload: string; json: Record<string, unknown> }> = [];
  const scan = parseNdjsonLines(bytes, 1, {
    scanned(scanner: CompactLineScanner) {
      discovery.addScanned(scanner);
      found.push(scanner.timestamp, scanner.payloadStart, scanner.payloadEnd);
    },
    parsed(timestamp, payload, json) {
      discovery.add(json);
      found.push(timestamp, -1, slow.length);
      slow.push({ payload, json });
    },
  });
  const keys = discovery.keys;
  const typed = target.keys && new Set(target.keys);
  const forms: FormColumns[] = [];
  for (const key of keys) {
    if (forms.length >= MAX_KEY_COLUMNS) break;
    if (![...key.kinds].some((kind) => kind !== 'object')) continue;
    if (typed && !typed.has(key.path[0] as string)) continue;
    if (formColumnsAllowed(key.path)) forms.push(formColumnsOf(key.path));
  }
  const writer = rows;
  writer.reset(forms);
  let seq = BigInt(target.seqBase);
  for (let i = 0; i < found.length; i += 3) {
    const timestamp = found[i] as number;
    const start = found[i + 1] as number;
    const end = found[i + 2] as number;
    if (start >= 0) {
      // The fast path's payload is already what JSON.stringify writes.
      const payload = utf8(bytes, start, end);
      writer.add({ collection, timestamp, seq: String(seq++), payload, canonical: true });
    } else {
      const { payload, json } = slow[end] as (typeof slow)[number];
      writer.add({ collection, timestamp, seq: String(seq++), payload, json });
    }
  }
  const count = found.length / 3;
  return {
    id: job.id,
    lines: scan.lines,
    events: count,
    longest: 0,
    bytes: 0,
    bad: scan.bad,
    keys,
    buffer: bytes.buffer as ArrayBuffer,
    ...(count ? { tsv: writer.text() } : {}),
  };
}

/** Each event of a chunk as three numbers: timestamp, payload start and end (or -1, index). */
const events: number[] = [];
const rows = new TsvRowWriter();

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

  /** The records' bytes so far. */
  get length(): number {
    return this.#length;
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
