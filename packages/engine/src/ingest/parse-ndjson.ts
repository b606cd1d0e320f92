import { CompactLineScanner } from './compact-line.ts';
import { BAD_TIMESTAMP, toPayload, toTimestamp } from './payload-checks.ts';

/** A line that could not be loaded, with its 1-based number and the reason. */
export interface BadLine {
  line: number;
  reason: string;
}

/**
 * Receives a good line's event: whole Unix seconds, the payload text, and where its keys are: the
 * object parsed from it, or the scanner that took the line's fast path and recorded them.
 */
export type OnEvent = (
  timestamp: number,
  payload: string,
  keys: Record<string, unknown> | CompactLineScanner,
) => void;

/**
 * Parses NDJSON lines `{"timestamp": <unix s>, "json": {…} | "<json text>"}`, numbered from
 * `firstLine`, with the same checks and words as `/api/log` (the timestamp is required here),
 * and returns the bad lines and the number of lines, blank ones included. Each good event goes
 * to `onEvent` at once, so a caller can pass it on and drop it: objects that die young cost the
 * garbage collector far less than a chunk's worth of them kept to the end. Blank lines are
 * skipped; `\r\n` line ends are fine. A line already in compact form takes the fast path of
 * {@link CompactLineScanner}, with the same outcome; any other is parsed.
 */
export function parseNdjsonLines(
  text: string,
  firstLine: number,
  onEvent: OnEvent,
): { bad: BadLine[]; lines: number } {
  const bad: BadLine[] = [];
  const scanner = new CompactLineScanner();
  let line = firstLine;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    if (end > start && scanner.scan(text, start, end)) {
      onEvent(scanner.timestamp, text.slice(scanner.payloadStart, scanner.payloadEnd), scanner);
    } else if (end > start) {
      const raw = text.slice(start, end);
      const reason = parseLine(raw, onEvent);
      // A line of only spaces is blank, not bad (checked only when parsing failed: it is rare).
      if (reason && !BLANK.test(raw)) bad.push({ line, reason });
    }
    line++;
    start = end + 1;
  }
  return { bad, lines: line - firstLine };
}

const BLANK = /^\s*$/;

function parseLine(raw: string, onEvent: OnEvent): string | undefined {
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
  onEvent(seconds, payload.payload, payload.json);
  return undefined;
}
