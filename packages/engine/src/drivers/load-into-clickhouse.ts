import { open, stat } from 'node:fs/promises';
import { utf8 } from '../ingest/compact-line.ts';
import { discoverObjectKeys } from '../ingest/discover-keys.ts';
import type { EventRecord } from '../ingest/event-records.ts';
import { type BadLine, parseNdjsonLines } from '../ingest/parse-ndjson.ts';
import { type ClickHouseOptions, openClickHouseDriver } from './clickhouse/clickhouse-driver.ts';

/** Events per insert: one ClickHouse part each. */
const BATCH_EVENTS = 50_000;
/** Bytes read at a time; a line longer than this is read on until its end. */
const CHUNK_BYTES = 8 * 1024 * 1024;
/** How long one batch's insert may take. */
const INSERT_TIMEOUT_MS = 300_000;

/** Options of {@link loadIntoClickHouse}. */
export interface ClickHouseLoadOptions {
  onBadLine?: (bad: BadLine) => void;
  onProgress?: (p: { bytesRead: number; totalBytes: number; events: number }) => void;
}

/**
 * What `engine load --clickhouse` runs: NDJSON lines `{"timestamp", "json"}` checked line by
 * line exactly as the DuckDB load checks them (the same parser, bad lines reported with number
 * and reason), and the good ones written through the ClickHouse driver's own ingest, which
 * registers the collection, gives new key paths their form columns and fills them, as
 * `/api/bulk-log` does. Returns the counts of events loaded and of bad lines.
 */
export async function loadIntoClickHouse(
  file: string,
  clickhouse: ClickHouseOptions,
  workspace: string,
  collection: string,
  options: ClickHouseLoadOptions = {},
): Promise<{ events: number; badLines: number }> {
  const totalBytes = (await stat(file)).size;
  const driver = await openClickHouseDriver(clickhouse, {
    workspaces: [workspace],
    memoryLimit: '1GB',
    requestTimeoutMs: INSERT_TIMEOUT_MS,
  });
  const handle = await open(file, 'r');
  let events = 0;
  let badLines = 0;
  let records: EventRecord[] = [];
  const target = driver.workspaces.get(workspace);
  if (!target) throw new Error(`workspace ${workspace} was not opened`);
  const flush = async () => {
    if (records.length === 0) return;
    const batch = records;
    records = [];
    const keys = discoverObjectKeys(
      batch.map((r) => r.json ?? (JSON.parse(r.payload) as Record<string, unknown>)),
    );
    await target.ingest({ collection, records: batch, keys });
    events += batch.length;
  };
  try {
    let carry = new Uint8Array(0);
    let bytesRead = 0;
    let line = 1;
    for (;;) {
      const chunk = new Uint8Array(CHUNK_BYTES);
      const { bytesRead: n } = await handle.read(chunk, 0, CHUNK_BYTES, null);
      bytesRead += n;
      const data = concat(carry, chunk.subarray(0, n));
      // Whole lines only: the rest waits for the next chunk, or is the file's last line.
      const end = n === 0 ? data.length : data.lastIndexOf(0x0a) + 1;
      const lines = data.subarray(0, end);
      carry = data.slice(end);
      if (lines.length > 0) {
        const parsed = parseNdjsonLines(lines, line, {
          scanned: (s) => {
            records.push({
              timestamp: s.timestamp,
              payload: utf8(lines, s.payloadStart, s.payloadEnd),
            });
          },
          parsed: (timestamp, payload, json) => {
            records.push({ timestamp, payload, json });
          },
        });
        line += parsed.lines;
        for (const bad of parsed.bad) {
          badLines++;
          options.onBadLine?.(bad);
        }
        if (records.length >= BATCH_EVENTS) await flush();
      }
      options.onProgress?.({ bytesRead, totalBytes, events: events + records.length });
      if (n === 0) break;
    }
    await flush();
    options.onProgress?.({ bytesRead, totalBytes, events });
    return { events, badLines };
  } finally {
    await handle.close();
    await driver.close();
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
