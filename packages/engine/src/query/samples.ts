import { type Envelope, LIMITS, type SampleRow } from '@analytics-chart/protocol';
import { SqlParams } from '../storage/sql-params.ts';
import {
  and,
  type QueryContext,
  queryRows,
  sourceSql,
  toNumber,
  whereFilters,
} from './query-context.ts';
import { windowSeconds } from './time-buckets.ts';

/**
 * The most rows one Samples answer carries when a single second holds more than
 * {@link LIMITS.samples} events (see {@link samplesEnvelope}).
 */
export const MAX_SAMPLES_SECOND = 10_000;

/**
 * Where a Samples envelope keeps the payloads' stored text, beside the parsed objects, so the
 * HTTP app can send them byte-for-byte (numbers like `1.50` or `2^64` survive). Not enumerable:
 * in-process callers see a plain envelope.
 */
const RAW_PAYLOADS = Symbol('raw Samples payloads');

/** Ranges tried from the newest (or oldest) end of the window, in seconds; the last is all. */
const NARROWING_SPANS = [3600, 86_400, 30 * 86_400, Number.POSITIVE_INFINITY];

/**
 * Samples: events exactly as ingested, at most 50 per call, filters applied. `Ascending` is
 * oldest first and, within a second, in ingest order (row ids follow commit order);
 * `Descending` is its exact reverse, so that the two orders page through the same sequence.
 *
 * A page never ends in the middle of a second. Clients page by moving `start` (or `end`) to the
 * last timestamp they saw, and bounds are exclusive, so a page cut inside a second would lose
 * that second's remaining events. When the 50th and 51st events share a second, that second is
 * left for the next page; when more than 50 events share the first second of a page, that whole
 * second is returned (up to {@link MAX_SAMPLES_SECOND} rows).
 */
export async function samplesEnvelope(ctx: QueryContext): Promise<Envelope> {
  const { lo, hi } = windowSeconds(ctx.windows.window);
  if (lo > hi || !ctx.entry) return { result: [], metadata: {} };
  const ascending = ctx.query.order === 'Ascending';
  const direction = ascending ? 'ASC' : 'DESC';
  const page = async (from: number, to: number, limit: number) => {
    const params = new SqlParams();
    return queryRows(
      ctx,
      `SELECT "timestamp", "json" FROM ${sourceSql(ctx)}
       WHERE ${and(
         `"timestamp" BETWEEN ${params.integer(from)} AND ${params.integer(to)}`,
         whereFilters(ctx, ctx.query.filters, params),
       )}
       ORDER BY "timestamp" ${direction}, rowid ${direction} LIMIT ${params.integer(limit)}`,
      params,
    );
  };
  // Events are stored roughly in time order, so a narrow range at the right end of the window
  // lets DuckDB skip all other row groups by their min/max; widen only when it holds too few.
  let rows: Awaited<ReturnType<typeof page>> = [];
  for (const span of NARROWING_SPANS) {
    const from = ascending ? lo : Math.max(lo, hi - span);
    const to = ascending ? Math.min(hi, lo + span) : hi;
    rows = await page(from, to, LIMITS.samples + 1);
    if (rows.length > LIMITS.samples || (from === lo && to === hi)) break;
  }
  if (rows.length > LIMITS.samples) {
    const lastKept = rows[LIMITS.samples - 1]?.[0];
    const firstDropped = rows[LIMITS.samples]?.[0];
    rows = rows.slice(0, LIMITS.samples);
    if (lastKept === firstDropped) {
      const whole = rows.filter((row) => row[0] !== lastKept);
      const second = Number(lastKept);
      rows = whole.length > 0 ? whole : await page(second, second, MAX_SAMPLES_SECOND);
    }
  }
  const result: SampleRow[] = rows.map(([timestamp, json]) => ({
    timestamp: toNumber(timestamp ?? null) ?? 0,
    json: JSON.parse(String(json)) as Record<string, unknown>,
  }));
  return withRawPayloads(
    { result, metadata: {} },
    rows.map(([, json]) => String(json)),
  );
}

/**
 * Gives a Samples envelope the payload texts as stored, which the HTTP app splices into the
 * answer ({@link samplesJson}) so that a payload comes back byte for byte, with either driver.
 */
export function withRawPayloads(envelope: Envelope, raw: string[]): Envelope {
  Object.defineProperty(envelope, RAW_PAYLOADS, { value: raw });
  return envelope;
}

/** The JSON text of a Samples envelope with each payload exactly as stored, or undefined. */
export function samplesJson(envelope: unknown): string | undefined {
  const raw = (envelope as { [RAW_PAYLOADS]?: string[] } | null)?.[RAW_PAYLOADS];
  if (!raw) return undefined;
  const { result, metadata } = envelope as Envelope;
  const rows = (result as SampleRow[]).map(
    (row, i) => `{"timestamp":${JSON.stringify(row.timestamp)},"json":${raw[i]}}`,
  );
  return `{"result":[${rows.join(',')}],"metadata":${JSON.stringify(metadata)}}`;
}
