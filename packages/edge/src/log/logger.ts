/**
 * Operator logs. Entries are plain objects written as one JSON line each; every string passes
 * through a scrubber that replaces registered secrets (the workspace key, signing secrets) with
 * `[redacted]`, so a secret echoed inside an upstream error message still never lands in a log.
 */

/** How loud an entry is. */
export type LogLevel = 'info' | 'warn' | 'error';

/** One log line: a level, a dotted event name, a sentence, and small scalar fields. */
export interface LogEntry {
  level: LogLevel;
  event: string;
  message: string;
  [field: string]: string | number | boolean | undefined;
}

/** Where log entries go. The default writes JSON lines to the console. */
export type LogSink = (entry: LogEntry) => void;

/** Writes one JSON line per entry: errors to stderr, the rest to stdout. */
export const consoleLogSink: LogSink = (entry) => {
  const line = JSON.stringify({ time: new Date().toISOString(), ...entry });
  if (entry.level === 'info') console.log(line);
  else console.error(line);
};

/** A logger that scrubs secrets from every field before handing the entry to the sink. */
export interface Logger {
  log(entry: LogEntry): void;
  /** Registers more strings that must never be logged. */
  addSecrets(secrets: readonly string[]): void;
  /** Scrubs a string the same way (for error messages built from upstream text). */
  scrub(text: string): string;
}

/** Builds a scrubbing logger around a sink. Secrets shorter than 8 characters are ignored. */
export function createLogger(
  sink: LogSink = consoleLogSink,
  secrets: readonly string[] = [],
): Logger {
  const known = new Set<string>();
  const scrub = (text: string): string => {
    let out = text;
    for (const secret of known)
      if (out.includes(secret)) out = out.split(secret).join('[redacted]');
    return out;
  };
  const addSecrets = (more: readonly string[]) => {
    for (const s of more) if (s.length >= 8) known.add(s);
  };
  addSecrets(secrets);
  return {
    addSecrets,
    scrub,
    log(entry) {
      const clean: LogEntry = { level: entry.level, event: entry.event, message: '' };
      for (const [key, value] of Object.entries(entry)) {
        clean[key] = typeof value === 'string' ? scrub(value) : value;
      }
      try {
        sink(clean);
      } catch {
        // A broken sink must not turn a served request into a failure.
      }
    },
  };
}

/**
 * A short, non-reversible fingerprint of a query id for logs (FNV-1a, 32 bits, hex). Logs never
 * carry a whole id: a logged id would be a working credential until it expires.
 */
export function fingerprint(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return `id#${(hash >>> 0).toString(16).padStart(8, '0')}`;
}
