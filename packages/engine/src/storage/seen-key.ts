/**
 * What key discovery reports to storage: the key paths a batch of payloads holds and the kinds
 * of value each held, which decide the typed columns on every driver. Defined here, below both
 * ingest and the drivers' storage, so that storage reads it without reaching up into ingest.
 */

/** Objects nested deeper than this are kept whole, as a JSON string, at the last level. */
export const MAX_DEPTH = 6;

/** The kinds of JSON value that decide a key's columns (`null` counts as missing). */
export type ValueKind = 'string' | 'numeric string' | 'number' | 'boolean' | 'array' | 'object';

/**
 * Key paths (up to {@link MAX_DEPTH} keys, objects included) one event may hold; a wider event
 * is refused, on every driver, so that what one event costs to ingest stays bounded.
 */
export const MAX_EVENT_KEYS = 1_000;

/**
 * An event holding more key paths than this is wide: keys that only wide events hold earn no
 * typed columns and are read from the stored payloads (maps keyed by ids are such keys).
 */
export const WIDE_EVENT_KEYS = 100;

/** A key path found in a batch and the kinds of value it held there. */
export interface SeenKey {
  path: string[];
  kinds: Set<ValueKind>;
  /** Set when only events wider than {@link WIDE_EVENT_KEYS} held it in this batch. */
  wideOnly?: boolean;
}
