import type { SeenKey } from './seen-key.ts';

/**
 * The write contract between ingest and storage: checked events and the keys they hold, ready
 * for any driver to write. Ingest builds batches; storage only reads them.
 */

/**
 * An event ready to write: Unix seconds (whole), the payload text of a JSON object, and that
 * object when the caller already holds it (key discovery then needs no second parse).
 */
export interface EventRecord {
  timestamp: number;
  payload: string;
  json?: Record<string, unknown>;
  /** Set when `payload` is exactly what `JSON.stringify` writes for its object (compact form). */
  canonical?: boolean;
}

/** One collection's checked events and the keys discovery found in them. */
export interface IngestBatch {
  collection: string;
  records: EventRecord[];
  keys: SeenKey[];
}
