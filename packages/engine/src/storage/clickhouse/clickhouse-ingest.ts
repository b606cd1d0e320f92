import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client-web';
import type { IngestBatch } from '../ingest-batch.ts';
import type { FormColumns } from './clickhouse-key-columns.ts';
import { type TsvEvent, tsvHeader, tsvRows } from './clickhouse-rows.ts';
import { EVENTS_TABLE, quoteClickHouseIdentifier } from './clickhouse-schema.ts';

/** Attempts of one insert when the connection to ClickHouse fails (not when ClickHouse refuses). */
const ATTEMPTS = 3;

/**
 * One request's events as rows of the event table, rendered when the request arrives (while an
 * earlier insert may still be running), so that an insert only joins the rows of the requests it
 * carries. `forms` are the form columns the rows fill, `header` their `tsvRows` header line.
 */
export interface RenderedBatch {
  header: string;
  forms: readonly FormColumns[];
  /** The rows, each starting with a newline: the header followed by them is `tsvRows` text. */
  rows: string;
  /** The events, kept to render them again for another header. */
  events: readonly TsvEvent[];
}

/** The last `seq` handed out: its millisecond and the index within it. */
let seqMs = 0;
let seqIndex = 0;
/** Indexes in one millisecond: a `seq` is the millisecond followed by five digits. */
const SEQ_INDEXES = 100_000;

/**
 * `count` consecutive `seq` values, after every one handed out before in this process: the
 * millisecond of arrival, then an index within it (a millisecond whose indexes ran out borrows
 * the next), so events within a second sort by arrival.
 */
export function nextSeqs(count: number, now = Date.now()): string[] {
  if (now > seqMs) {
    seqMs = now;
    seqIndex = 0;
  }
  if (seqIndex + count > SEQ_INDEXES) {
    seqMs++;
    seqIndex = 0;
  }
  const ms = String(seqMs);
  const seqs: string[] = [];
  for (let i = 0; i < count; i++) seqs.push(`${ms}${String(seqIndex + i).padStart(5, '0')}`);
  seqIndex += count;
  return seqs;
}

/**
 * Renders a batch's events for an insert filling `forms` (the forms of each key path, computed
 * here except those JavaScript cannot be sure of for some event, which the insert leaves to the
 * columns' DEFAULT), each event with the next `seq` of this process.
 */
export function renderBatch(batch: IngestBatch, forms: readonly FormColumns[]): RenderedBatch {
  const seqs = nextSeqs(batch.records.length);
  const events = batch.records.map(
    (r, i): TsvEvent => ({
      collection: batch.collection,
      timestamp: r.timestamp,
      seq: seqs[i] as string,
      payload: r.payload,
      ...(r.canonical ? { canonical: true } : {}),
    }),
  );
  return renderEvents(events, forms);
}

function renderEvents(events: readonly TsvEvent[], forms: readonly FormColumns[]): RenderedBatch {
  const header = tsvHeader(forms);
  return { header, forms, rows: tsvRows(events, forms).slice(header.length), events };
}

/**
 * Writes rendered batches (the requests a group commit gathered) as one insert, and resolves
 * only once ClickHouse has acknowledged it (a synchronous insert). Batches rendered for other
 * form columns than the first (columns added or read meanwhile) are rendered again for its
 * columns, which exist in the table: columns are never dropped. Every attempt carries the same
 * `insert_deduplication_token`, so an attempt that reached ClickHouse before its connection broke
 * is not written twice by the retry; a token is drawn per insert, so two requests with the same
 * events are both kept, as the DuckDB driver does.
 */
export async function insertRendered(
  client: ClickHouseClient,
  database: string,
  batches: readonly RenderedBatch[],
  isConnectionError: (error: unknown) => boolean,
): Promise<void> {
  const first = batches.find((batch) => batch.events.length > 0);
  if (!first) return;
  const parts = [first.header];
  for (const batch of batches) {
    if (batch.events.length === 0) continue;
    parts.push(
      batch.header === first.header ? batch.rows : renderEvents(batch.events, first.forms).rows,
    );
  }
  const text = parts.join('');
  const token = randomUUID();
  for (let attempt = 1; ; attempt++) {
    try {
      await insertTsv(client, database, text, token);
      return;
    } catch (error) {
      if (attempt >= ATTEMPTS || !isConnectionError(error)) throw error;
    }
  }
}

/**
 * One synchronous insert of {@link tsvRows} text, answered once ClickHouse has the rows,
 * deduplicated by `token`. With `skipUnknown`, form columns the table lacks are skipped.
 */
export async function insertTsv(
  client: ClickHouseClient,
  database: string,
  text: string,
  token: string,
  skipUnknown = false,
): Promise<void> {
  const table = `${quoteClickHouseIdentifier(database)}.${quoteClickHouseIdentifier(EVENTS_TABLE)}`;
  // Forms JavaScript was not sure of are empty fields (a field is never empty otherwise).
  const defaults = skipUnknown || text.includes('\t\t');
  // Columns the list leaves out (added since this engine read the table's) get their DEFAULT
  // without the format's defaults: those make ClickHouse prepare every column's DEFAULT per insert.
  const columns = skipUnknown
    ? ''
    : ` (${text.slice(0, text.indexOf('\n')).split('\t').map(quoteClickHouseIdentifier).join(', ')})`;
  const result = await client.exec({
    query: `INSERT INTO ${table}${columns} FORMAT TabSeparatedWithNames\n${text}`,
    clickhouse_settings: {
      async_insert: 0,
      insert_distributed_sync: 1,
      insert_deduplicate: 1,
      insert_deduplication_token: token,
      // An empty field is a form ClickHouse computes: its column's DEFAULT.
      input_format_tsv_empty_as_default: defaults ? 1 : 0,
      input_format_defaults_for_omitted_fields: defaults ? 1 : 0,
      // The answer starts only once the insert is done, so a failure is never a 200.
      wait_end_of_query: 1,
      ...(skipUnknown ? { input_format_skip_unknown_fields: 1 } : {}),
    },
  });
  // Acknowledged only once the whole answer arrived: one cut half-way is not ClickHouse's word.
  await new Response(result.stream).arrayBuffer();
}
