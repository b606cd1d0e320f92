import type { EventRecord, IngestBatch } from '../storage/ingest-batch.ts';
import type { IngestBody } from './ingest-body.ts';

/**
 * An ingest body as a body worker sends it back: a batch's records as a list of payload texts
 * beside their one timestamp and how many lead in compact form, which the structured clone of a
 * message copies several times faster than an object per event, on both threads.
 */

/** A batch in its message form, or as it is where it does not fit that form. */
export type PackedBatch =
  | {
      collection: string;
      keys: IngestBatch['keys'];
      timestamp: number;
      payloads: string[];
      /** How many of the first records are in compact form (`canonical`); none after them. */
      canonical: number;
    }
  | { batch: IngestBatch };

/** An {@link IngestBody} with its batch, if any, in message form. */
export type PackedBody =
  | Exclude<IngestBody, { batch: IngestBatch }>
  | { auth: unknown; packed: PackedBatch };

/** The message form of a body: records sharing one timestamp, the compact ones first. */
export function packBody(body: IngestBody): PackedBody {
  if (!('batch' in body)) return body;
  const { batch } = body;
  const records = batch.records;
  const timestamp = records[0]?.timestamp ?? 0;
  let canonical = 0;
  while (canonical < records.length && records[canonical]?.canonical) canonical++;
  const fits = records.every(
    (r, i) =>
      r.timestamp === timestamp &&
      r.json === undefined &&
      (i < canonical || r.canonical === undefined),
  );
  if (!fits) return { auth: body.auth, packed: { batch } };
  return {
    auth: body.auth,
    packed: {
      collection: batch.collection,
      keys: batch.keys,
      timestamp,
      payloads: records.map((r) => r.payload),
      canonical,
    },
  };
}

/** The body {@link packBody} was given. */
export function unpackBody(body: PackedBody): IngestBody {
  if (!('packed' in body)) return body;
  const { packed } = body;
  if ('batch' in packed) return { auth: body.auth, batch: packed.batch };
  const { timestamp, canonical } = packed;
  const records = packed.payloads.map(
    (payload, i): EventRecord =>
      i < canonical ? { timestamp, payload, canonical: true } : { timestamp, payload },
  );
  return {
    auth: body.auth,
    batch: { collection: packed.collection, records, keys: packed.keys },
  };
}
