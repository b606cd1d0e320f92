import * as z from 'zod';

/**
 * The response envelope of `POST /api/visualize/data`: `result`, optional `compare_result`, and
 * `metadata`. Row shapes vary with the graph type, so rows are described loosely here and
 * narrowed by the helpers below.
 */

/** A time-series row: a `timestamp` label and one or more numeric value keys. */
export type TimeSeriesRow = { timestamp: string } & Record<string, string | number | null>;

/** A Samples row: the event exactly as ingested. */
export interface SampleRow {
  timestamp: number;
  json: Record<string, unknown>;
}

/** A table-like row: the split field and a value key, or any columns in SQL mode. */
export type TableRow = Record<string, unknown>;

/** What `metadata` may carry. Unknown keys pass through untouched. */
export interface EnvelopeMetadata {
  /** The granularity actually used (Auto resolved). */
  granularity?: string;
  /** The aggregation over the whole window. */
  combined?: number | null;
  /** The same for the comparison window. */
  compare_combined?: number | null;
  /** Series names of Multi/Stacked Line in display order. */
  series?: string[];
  /** True when SQL results were cut at the row cap. */
  truncated?: boolean;
  [key: string]: unknown;
}

/** A successful answer of the data endpoint. */
export interface Envelope {
  result: unknown[];
  compare_result?: unknown[];
  metadata: EnvelopeMetadata;
}

/** The body of every failure: one clear sentence. */
export interface ErrorBody {
  error: string;
}

/** The envelope as it arrives over the wire, validated before anyone trusts it. */
export const envelopeSchema: z.ZodType<Envelope> = z.object({
  result: z.array(z.unknown()),
  compare_result: z.array(z.unknown()).optional(),
  metadata: z
    .looseObject({})
    .optional()
    .transform((m) => m ?? {}),
}) as unknown as z.ZodType<Envelope>;

/** The failure body; `error` must be a string for a client to show it. */
export const errorBodySchema = z.object({ error: z.string() });

/** The exact text of the invalid-key answer, which clients must not retry. */
export const INVALID_API_KEY = 'Invalid API KEY';

/** The exact text of the answer to any SQL that is not one read-only SELECT. */
export const READ_ONLY_SQL = 'Only read-only SELECT queries are allowed';
