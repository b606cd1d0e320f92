import { CompactLineScanner } from './compact-line.ts';
import { MAX_EVENT_KEYS } from './discover-keys.ts';
import { BAD_TIMESTAMP, TOO_WIDE, toPayload, toTimestamp } from './payload-checks.ts';
import { describeBadUtf8, strictUtf8 } from './strict-utf8.ts';

/** A line that could not be loaded, with its 1-based number and the reason. */
export interface BadLine {
  line: number;
  reason: string;
}

/**
 * Receives each good line's event at once, so that a caller can pass it on and drop it (objects
 * that die young cost the garbage collector far less than a chunk's worth kept to the end).
 */
export interface NdjsonEvents {
  /**
   * A line that took the fast path: the scanner holds its timestamp, where its payload's bytes
   * are, and its keys, until the next line is scanned.
   */
  scanned(scanner: CompactLineScanner): void;
  /** A line parsed the slow way: whole Unix seconds, the payload text and its object. */
  parsed(timestamp: number, payload: string, json: Record<string, unknown>): void;
}

const NEWLINE = 0x0a;

/**
 * Parses NDJSON lines `{"timestamp": <unix s>, "json": {…} | "<json text>"}` from UTF-8 bytes,
 * numbered from `firstLine`, with the same checks and words as `/api/log` (the timestamp is
 * required here), and returns the bad lines and the number of lines, blank ones included.
 * Blank lines are skipped; `\r\n` line ends are fine. A line already in compact form takes the
 * fast path of {@link CompactLineScanner}, with the same outcome; any other is decoded (a line
 * that is not well-formed UTF-8 is bad, naming its field) and parsed.
 */
export function parseNdjsonLines(
  bytes: Uint8Array,
  firstLine: number,
  events: NdjsonEvents,
): { bad: BadLine[]; lines: number } {
  const bad: BadLine[] = [];
  const scanner = new CompactLineScanner();
  let line = firstLine;
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(NEWLINE, start);
    if (end === -1) end = bytes.length;
    if (end > start && scanner.scan(bytes, start, end)) {
      if (scanner.count > MAX_EVENT_KEYS) bad.push({ line, reason: `json: ${TOO_WIDE}` });
      else events.scanned(scanner);
    } else if (end > start) {
      const raw = strictUtf8(bytes.subarray(start, end), true);
      const reason =
        raw === null
          ? describeBadUtf8(bytes.subarray(start, end), undefined, true)
          : parseLine(raw, events);
      // A line of only spaces is blank, not bad (checked only when parsing failed: it is rare).
      if (reason && (raw === null || !BLANK.test(raw))) bad.push({ line, reason });
    }
    line++;
    start = end + 1;
  }
  return { bad, lines: line - firstLine };
}

const BLANK = /^\s*$/;

function parseLine(raw: string, events: NdjsonEvents): string | undefined {
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
  events.parsed(seconds, payload.payload, payload.json);
  return undefined;
}
