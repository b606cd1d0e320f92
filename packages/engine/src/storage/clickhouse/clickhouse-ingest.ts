import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client-web';
import type { IngestBatch } from '../ingest-batch.ts';
import type { FormColumns } from './clickhouse-key-columns.ts';
import { type TsvEvent, tsvRows } from './clickhouse-rows.ts';
import { EVENTS_TABLE, quoteClickHouseIdentifier } from './clickhouse-schema.ts';

/** Attempts of one insert when the connection to ClickHouse fails (not when ClickHouse refuses). */
const ATTEMPTS = 3;

/**
 * Writes batches (the requests a group commit gathered) as one insert, and resolves only once
 * ClickHouse has acknowledged it (a synchronous insert), with the forms of each key path in
 * `forms` computed here, except those JavaScript cannot be sure of for some event, which the
 * insert leaves to the columns' DEFAULT. Every attempt carries the same
 * `insert_deduplication_token`, so an attempt that reached ClickHouse before its connection broke
 * is not written twice by the retry; a token is drawn per insert, so two requests with the same
 * events are both kept, as the DuckDB driver does.
 */
export async function insertBatches(
  client: ClickHouseClient,
  database: string,
  batches: readonly IngestBatch[],
  isConnectionError: (error: unknown) => boolean,
  forms: readonly FormColumns[] = [],
): Promise<void> {
  const token = randomUUID();
  // Orders events within a second as they arrived: the insert's millisecond, then its index
  // (requests in the order they came, each request's events in its order).
  const ms = String(Date.now());
  const events: TsvEvent[] = [];
  for (const batch of batches) {
    for (const r of batch.records) {
      events.push({
        collection: batch.collection,
        timestamp: r.timestamp,
        seq: `${ms}${String(events.length).padStart(5, '0')}`,
        payload: r.payload,
        ...(r.canonical ? { canonical: true } : {}),
      });
    }
  }
  if (events.length === 0) return;
  const text = tsvRows(events, forms);
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
