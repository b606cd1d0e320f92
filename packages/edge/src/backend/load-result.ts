import { isSqlQuery, parseTimeValue, resolveWindows } from '@analytics-chart/protocol';
import { wholeSecondWindow } from '../payload/to-chart-payload.ts';
import type { LoadedResult } from '../protection/result-cache.ts';
import type { ResolvedQuery } from '../registry/resolve-query.ts';
import type { Backend } from './backend.ts';

/** One backend call's body, and the window (Unix seconds) its answer covers. */
export interface PinnedQuery {
  body: Record<string, unknown>;
  window: { start: number; end: number } | undefined;
}

/** Whether a time value depends on the clock (`now`, `7 days ago`). */
function isRelative(value: unknown): boolean {
  const kind = parseTimeValue(value)?.kind;
  return kind === 'now' || kind === 'ago';
}

/**
 * The body to send at `nowMs`, with the window resolved here and only here: a relative `start` or
 * `end` becomes the Unix seconds it means at this instant, so the backend runs exactly the window
 * the answer's `range` and `incomplete` describe instead of reading a clock of its own. Absolute
 * times and SQL queries travel as written; a window that does not resolve is sent as is, for the
 * backend to refuse in its own words.
 */
export function pinWindow(query: ResolvedQuery, nowMs: number): PinnedQuery {
  const { body, parsed } = query;
  if (isSqlQuery(parsed)) return { body, window: undefined };
  // The API reads whole Unix seconds; rounding up keeps the current second's events in a window
  // that ends now.
  const windows = resolveWindows(parsed, Math.ceil(nowMs / 1000));
  if (!windows.ok) return { body, window: undefined };
  const { window } = windows.value;
  const pinned = { ...body };
  if (isRelative(parsed.start)) pinned.start = window.start;
  if (isRelative(parsed.end)) pinned.end = window.end;
  return { body: pinned, window: wholeSecondWindow(window) };
}

/** One backend call for a resolved query at `nowMs`: the envelope, and the window it covers. */
export async function loadResult(
  backend: Backend,
  query: ResolvedQuery,
  nowMs: number,
): Promise<LoadedResult> {
  const { body, window } = pinWindow(query, nowMs);
  return { envelope: await backend.query(body), window };
}
