import { describeZodError } from './describe-error.ts';
import { type CollectionQuery, type QueryRequest, queryRequestSchema } from './query-request.ts';
import { parseTimeOffset, resolveTimeValue, shiftBack, type TimeRangeError } from './time-value.ts';
import type { Granularity, ResolvedGranularity } from './vocabulary.ts';

/** A value or the one sentence that explains why there is none. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: string };

/** Validates a request body (without `api_key`) and applies every default. */
export function parseQueryRequest(body: unknown): Result<QueryRequest> {
  const parsed = queryRequestSchema.safeParse(body);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, error: describeZodError(parsed.error) };
}

/** A resolved window in Unix seconds; both ends exclusive. */
export interface TimeWindow {
  start: number;
  end: number;
}

/** The query window and, when `compare` is set, the same window shifted back by the offset. */
export interface ResolvedWindows {
  window: TimeWindow;
  compare?: TimeWindow;
}

/**
 * Resolves `start`, `end` and `compare` of a collection query against `now` (Unix seconds) in
 * the query's zone. Fails with a sentence naming the field when a value lands out of range or
 * the window is empty.
 */
export function resolveWindows(query: CollectionQuery, now: number): Result<ResolvedWindows> {
  const context = { timeZone: query.IANA_time_zone, now };
  const start = resolveTimeValue(query.start, context);
  if (start === null) return { ok: false, error: `start: '${query.start}' is out of range` };
  const end = resolveTimeValue(query.end, context);
  if (end === null) return { ok: false, error: `end: '${query.end}' is out of range` };
  if (!(start < end)) return { ok: false, error: 'start: must be earlier than end' };
  const window = { start, end };
  if (!query.compare) return { ok: true, value: { window } };
  const offset = parseTimeOffset(query.compare);
  if (!offset)
    return { ok: false, error: `compare: could not parse '${query.compare}' as an offset` };
  try {
    const compare = {
      start: shiftBack(start, offset, query.IANA_time_zone),
      end: shiftBack(end, offset, query.IANA_time_zone),
    };
    return { ok: true, value: { window, compare } };
  } catch (error) {
    if ((error as TimeRangeError) instanceof RangeError) {
      return { ok: false, error: `compare: '${query.compare}' moves the window out of range` };
    }
    throw error;
  }
}

const HOUR = 3600;
const DAY = 24 * HOUR;

/**
 * The granularity `Auto` stands for, from the window's span: up to 3 hours Minute, up to 3 days
 * Hour, up to 92 days Day, up to 366 days Week, else Month.
 */
export function pickGranularity(granularity: Granularity, window: TimeWindow): ResolvedGranularity {
  if (granularity !== 'Auto') return granularity;
  const span = window.end - window.start;
  if (span <= 3 * HOUR) return 'Minute';
  if (span <= 3 * DAY) return 'Hour';
  if (span <= 92 * DAY) return 'Day';
  if (span <= 366 * DAY) return 'Week';
  return 'Month';
}
