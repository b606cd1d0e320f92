import { LIMITS, type SampleRow } from '@analytics-chart/protocol';
import type { CollectionAnswer } from './collection-plan.ts';

/**
 * The most rows one Samples answer carries when a single second holds more than
 * {@link LIMITS.samples} events (see {@link wholeSecondsPage}).
 */
export const MAX_SAMPLES_SECOND = 10_000;

/** One stored event as Samples reads it: its second and its payload's stored text. */
export interface StoredSample {
  timestamp: number;
  json: string;
}

/**
 * Cuts a page of Samples, given the first `LIMITS.samples + 1` events in the page's order, so
 * that it never ends in the middle of a second. Clients page by moving `start` (or `end`) to
 * the last timestamp they saw, and bounds are exclusive, so a page cut inside a second would
 * lose that second's remaining events. When the 50th and 51st events share a second, that
 * second is left for the next page; when more than 50 events share the first second of a page,
 * that whole second is returned (up to {@link MAX_SAMPLES_SECOND} rows, from `wholeSecond`).
 */
export async function wholeSecondsPage(
  rows: StoredSample[],
  wholeSecond: (second: number, limit: number) => Promise<StoredSample[]>,
): Promise<StoredSample[]> {
  if (rows.length <= LIMITS.samples) return rows;
  const lastKept = rows[LIMITS.samples - 1]?.timestamp;
  const firstDropped = rows[LIMITS.samples]?.timestamp;
  const kept = rows.slice(0, LIMITS.samples);
  if (lastKept === undefined || lastKept !== firstDropped) return kept;
  const whole = kept.filter((row) => row.timestamp !== lastKept);
  return whole.length > 0 ? whole : wholeSecond(lastKept, MAX_SAMPLES_SECOND);
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
