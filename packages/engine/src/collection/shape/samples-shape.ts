import { LIMITS, type SampleRow } from '@analytics-chart/protocol';
import type { CollectionAnswer } from '../plan/collection-plan.ts';

/**
 * The shape stage of Samples, the same for every driver: a page of stored events cut so that it
 * never ends inside a second ({@link cutSamplesPage}), then answered with each payload exactly
 * as stored ({@link samplesAnswer}). Pure: no SQL and no storage.
 */

/**
 * The most rows one Samples answer carries when a single second holds more than
 * {@link LIMITS.samples} events (see {@link cutSamplesPage}).
 */
export const MAX_SAMPLES_SECOND = 10_000;

/** One stored event as Samples reads it: its second and its payload's stored text. */
export interface StoredSample {
  timestamp: number;
  json: string;
}

/** Rows `[timestamp, json]` as stored events. */
export function storedSamples(rows: ReadonlyArray<readonly unknown[]>): StoredSample[] {
  return rows.map(([timestamp, json]) => ({
    timestamp: timestamp === null || timestamp === undefined ? 0 : Number(timestamp),
    json: String(json),
  }));
}

/**
 * A page of Samples, or the one second whose events (up to {@link MAX_SAMPLES_SECOND}) are
 * the page.
 */
export type SamplesPage = { rows: StoredSample[] } | { wholeSecond: number };

/**
 * Cuts a page of Samples, given the first `LIMITS.samples + 1` events in the page's order, so
 * that it never ends in the middle of a second. Clients page by moving `start` (or `end`) to
 * the last timestamp they saw, and bounds are exclusive, so a page cut inside a second would
 * lose that second's remaining events. When the 50th and 51st events share a second, that
 * second is left for the next page; when more than 50 events share the first second of a page,
 * that whole second is the page (`wholeSecond`, which the run stage reads).
 */
export function cutSamplesPage(rows: StoredSample[]): SamplesPage {
  if (rows.length <= LIMITS.samples) return { rows };
  const lastKept = rows[LIMITS.samples - 1]?.timestamp;
  const firstDropped = rows[LIMITS.samples]?.timestamp;
  const kept = rows.slice(0, LIMITS.samples);
  if (lastKept === undefined || lastKept !== firstDropped) return { rows: kept };
  const whole = kept.filter((row) => row.timestamp !== lastKept);
  return whole.length > 0 ? { rows: whole } : { wholeSecond: lastKept };
}

/** The Samples answer of a page: parsed payloads, and the JSON text with them as stored. */
export function samplesAnswer(rows: StoredSample[]): CollectionAnswer {
  const result: SampleRow[] = rows.map((row) => ({
    timestamp: row.timestamp,
    json: JSON.parse(row.json) as Record<string, unknown>,
  }));
  const text = rows.map(
    (row) => `{"timestamp":${JSON.stringify(row.timestamp)},"json":${row.json}}`,
  );
  return {
    envelope: { result, metadata: {} },
    json: `{"result":[${text.join(',')}],"metadata":{}}`,
  };
}
