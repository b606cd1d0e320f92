import type { BadLine } from './append-events.ts';
import type { EventRecord } from './event-records.ts';
import { BAD_TIMESTAMP, toPayload, toTimestamp } from './ingest-request.ts';

/** The good events of a chunk of NDJSON and its bad lines. */
interface ParsedLines {
  records: EventRecord[];
  bad: BadLine[];
}

/**
 * Parses NDJSON lines `{"timestamp": <unix s>, "json": {…} | "<json text>"}`, numbered from
 * `firstLine`, with the same checks and words as `/api/log` (the timestamp is required here).
 * Blank lines are skipped; `\r\n` line ends are fine.
 */
export function parseNdjsonLines(text: string, firstLine: number): ParsedLines {
  const records: EventRecord[] = [];
  const bad: BadLine[] = [];
  let line = firstLine;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    if (end > start) {
      const raw = text.slice(start, end);
      const reason = parseLine(raw, records);
      // A line of only spaces is blank, not bad (checked only when parsing failed: it is rare).
      if (reason && !BLANK.test(raw)) bad.push({ line, reason });
    }
    line++;
    start = end + 1;
  }
  return { records, bad };
}

const BLANK = /^\s*$/;

function parseLine(raw: string, records: EventRecord[]): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return 'is not valid JSON';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'is not a JSON object';
  }
  const { timestamp, json } = value as { timestamp?: unknown; json?: unknown };
  if (timestamp === undefined || timestamp === null) return 'timestamp is required';
  const seconds = toTimestamp(timestamp);
  if (seconds === null) return `timestamp: ${BAD_TIMESTAMP}`;
  if (json === undefined || json === null) return 'json is required';
  const payload = toPayload(json);
  if (typeof payload === 'string') return `json: ${payload}`;
  records.push({ timestamp: seconds, payload: payload.payload, json: payload.json });
  return undefined;
}
