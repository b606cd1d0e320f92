import type { KeyDiscovery } from './discover-keys.ts';
import type { EventRecord } from './event-records.ts';
import { BAD_TIMESTAMP, toPayload, toTimestamp } from './payload-checks.ts';

/** A line that could not be loaded, with its 1-based number and the reason. */
export interface BadLine {
  line: number;
  reason: string;
}

/** The good events of a chunk of NDJSON and its bad lines. */
interface ParsedLines {
  records: EventRecord[];
  bad: BadLine[];
}

/**
 * Parses NDJSON lines `{"timestamp": <unix s>, "json": {…} | "<json text>"}`, numbered from
 * `firstLine`, with the same checks and words as `/api/log` (the timestamp is required here).
 * Blank lines are skipped; `\r\n` line ends are fine. With a `discovery`, each payload object
 * is handed to it at once and not kept in the records (it dies young, which the garbage
 * collector handles far more cheaply than a chunk's worth of objects kept to the end).
 */
export function parseNdjsonLines(
  text: string,
  firstLine: number,
  discovery?: KeyDiscovery,
): ParsedLines {
  const records: EventRecord[] = [];
  const bad: BadLine[] = [];
  let line = firstLine;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    if (end > start) {
      const raw = text.slice(start, end);
      const reason = parseLine(raw, records, discovery);
      // A line of only spaces is blank, not bad (checked only when parsing failed: it is rare).
      if (reason && !BLANK.test(raw)) bad.push({ line, reason });
    }
    line++;
    start = end + 1;
  }
  return { records, bad };
}

const BLANK = /^\s*$/;

function parseLine(
  raw: string,
  records: EventRecord[],
  discovery: KeyDiscovery | undefined,
): string | undefined {
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
  if (discovery) {
    discovery.add(payload.json);
    records.push({ timestamp: seconds, payload: payload.payload });
  } else records.push({ timestamp: seconds, payload: payload.payload, json: payload.json });
  return undefined;
}
