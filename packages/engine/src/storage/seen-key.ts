/**
 * What key discovery reports to storage: the key paths a batch of payloads holds and the kinds
 * of value each held, which decide the typed columns on every driver. Defined here, below both
 * ingest and the drivers' storage, so that storage reads it without reaching up into ingest.
 */

/** Objects nested deeper than this are kept whole, as a JSON string, at the last level. */
export const MAX_DEPTH = 6;

/** The kinds of JSON value that decide a key's columns (`null` counts as missing). */
export type ValueKind = 'string' | 'numeric string' | 'number' | 'boolean' | 'array' | 'object';

/** A key path found in a batch and the kinds of value it held there. */
export interface SeenKey {
  path: string[];
  kinds: Set<ValueKind>;
}
