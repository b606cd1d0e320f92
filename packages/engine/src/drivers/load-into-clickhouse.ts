import { open, stat } from 'node:fs/promises';
import { ChunkBuffers, fileChunks } from '../ingest/file-chunks.ts';
import type { ParsedChunk } from '../ingest/ndjson-chunk.ts';
import { defaultParseWorkers, NdjsonParsers } from '../ingest/ndjson-parsers.ts';
import type { BadLine } from '../ingest/parse-ndjson.ts';
import type { RollupSpec } from '../storage/rollup-spec.ts';
import { type ClickHouseOptions, openClickHouseDriver } from './clickhouse/clickhouse-driver.ts';

/** Bytes read and parsed at a time: one insert, one ClickHouse part each. */
const CHUNK_BYTES = 16 * 1024 * 1024;
/** How long one chunk's insert may take. */
const INSERT_TIMEOUT_MS = 300_000;
/**
 * The shortest line that holds an event (`{"json":{}}` and its line end): a chunk holds at most
 * its size over this many events, so that many `seq` numbers are set aside for it.
 */
const SHORTEST_EVENT_LINE = 12;
/** `seq` of events ingested in one millisecond: the insert's millisecond, then five digits. */
const SEQ_PER_MS = 100_000n;

/** Options of {@link loadIntoClickHouse}. */
export interface ClickHouseLoadOptions {
  onBadLine?: (bad: BadLine) => void;
  onProgress?: (p: { bytesRead: number; totalBytes: number; events: number }) => void;
  /** Parse worker threads (default one per core, at most four; 0 parses on this thread). */
  workers?: number;
  /**
   * Rollups the workspace keeps from now on, built before the first insert (`true`: the ones
   * it has, else counts alone; default: what the database has, which its materialized view
   * keeps up during the load).
   */
  rollups?: RollupSpec | true;
}

/**
 * What `engine load --clickhouse` runs: NDJSON lines `{"timestamp", "json"}` checked line by
 * line exactly as the DuckDB load checks them (the same parse workers, bad lines reported with
 * number and reason). The workers also compute each event's form columns and write a chunk's
 * good events as the text of one insert, while the main thread sends the chunk before; each
 * insert first registers the collection and gives new key paths their columns, as
 * `/api/bulk-log` does, and the sort projection (`clickhouse.sortField`) is made to hold the
 * columns before the first insert, so every part is written with its form columns and its
 * projection: the events are queryable as they are when the load ends. Returns the counts of
 * events loaded and of bad lines.
 */
export async function loadIntoClickHouse(
  file: string,
  clickhouse: ClickHouseOptions,
  workspace: string,
  collection: string,
  options: ClickHouseLoadOptions = {},
): Promise<{ events: number; badLines: number }> {
  const totalBytes = (await stat(file)).size;
  // Started first: their start-up overlaps opening the workspace.
  const parsers = new NdjsonParsers(options.workers ?? defaultParseWorkers());
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  let driver: Awaited<ReturnType<typeof openClickHouseDriver>> | undefined;
  try {
    driver = await openClickHouseDriver(clickhouse, {
      workspaces: [workspace],
      memoryLimit: '1GB',
      requestTimeoutMs: INSERT_TIMEOUT_MS,
      ...(options.rollups ? { rollups: { [workspace]: options.rollups } } : {}),
    });
    const target = driver.workspaces.get(workspace);
    if (!target) throw new Error(`workspace ${workspace} was not opened`);
    handle = await open(file, 'r');
    // The workers write the form columns of these keys' paths only, where not every key has them.
    const keys = target.typedKeys();
    let events = 0;
    let badLines = 0;
    let line = 1;
    // Events within a second keep the file's order after what was ingested before the load.
    let nextSeq = BigInt(Date.now()) * SEQ_PER_MS;
    const take = async ({ chunk, bytesRead }: InFlight) => {
      const parsed = await chunk;
      buffers.give(parsed.buffer);
      for (const bad of parsed.bad) {
        badLines++;
        options.onBadLine?.({ line: line + bad.line - 1, reason: bad.reason });
      }
      line += parsed.lines;
      if (parsed.tsv !== undefined) {
        await target.loadRows(collection, parsed.keys, parsed.tsv);
        events += parsed.events;
      }
      options.onProgress?.({ bytesRead: Math.min(bytesRead, totalBytes), totalBytes, events });
    };
    const buffers = new ChunkBuffers(CHUNK_BYTES);
    // Up to one chunk per worker is parsed while the oldest is inserted.
    const inFlight: InFlight[] = [];
    let id = 0;
    for await (const { bytes, bytesRead } of fileChunks(handle, buffers)) {
      const now = BigInt(Date.now()) * SEQ_PER_MS;
      const seqBase = now > nextSeq ? now : nextSeq;
      nextSeq = seqBase + BigInt(Math.floor(bytes.length / SHORTEST_EVENT_LINE) + 1);
      const chunk = parsers.parse({
        id: id++,
        bytes,
        file: '',
        clickhouse: { collection, seqBase: String(seqBase), keys },
      });
      // Chunks abandoned after a failure must not surface as unhandled rejections.
      chunk.catch(() => undefined);
      inFlight.push({ chunk, bytesRead });
      if (inFlight.length > parsers.count) await take(inFlight.shift() as InFlight);
    }
    for (let next = inFlight.shift(); next; next = inFlight.shift()) await take(next);
    if (events > 0) await target.finishLoad();
    options.onProgress?.({ bytesRead: totalBytes, totalBytes, events });
    return { events, badLines };
  } finally {
    await parsers.close();
    await handle?.close();
    await driver?.close();
  }
}

interface InFlight {
  chunk: Promise<ParsedChunk>;
  bytesRead: number;
}
