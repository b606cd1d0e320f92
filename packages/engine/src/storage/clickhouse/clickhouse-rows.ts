import { createHash } from 'node:crypto';
import { type PathNode, pathTree, valuesAt } from './clickhouse-canonical-values.ts';
import { formsOf, parsePayload, valueAt } from './clickhouse-forms.ts';

/**
 * Rows of the event table as ClickHouse's `TabSeparatedWithNames` text: the stored columns and
 * the form columns of every key path JavaScript is sure of for all the rows (the rest left to
 * the columns' DEFAULTs). Free of any client, so the loader's parse workers build an insert's
 * body while the main thread sends the one before; `/api/bulk-log` uses the same text, which
 * ClickHouse parses with less work than JSON and JavaScript writes without escaping quotes.
 */

/** Paths a workspace gives columns to; the rest are read from the JSON. */
export const MAX_KEY_COLUMNS = 64;
/** Paths deeper than this are read from the JSON only. */
const MAX_COLUMN_DEPTH = 3;
/** Keys that go into a DEFAULT as literals: no control characters or lone UTF-16 halves. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const LITERAL_KEY = /^[^\u0000-\u001f\ud800-\udfff]{0,200}$/;

/** A key path's form columns, unquoted. */
export interface FormColumns {
  path: readonly string[];
  number: string;
  string: string;
}

/** The hash that names a path's columns: the same in every engine on the same ClickHouse. */
export function formColumnBase(path: readonly string[]): string {
  return createHash('sha256').update(JSON.stringify(path)).digest('hex').slice(0, 24);
}

/** The form columns of `path`. */
export function formColumnsOf(path: readonly string[]): FormColumns {
  const base = formColumnBase(path);
  return { path, number: `n_${base}`, string: `s_${base}` };
}

/** Whether `path` may have form columns (shallow enough, keys fit for a DEFAULT's literal). */
export function formColumnsAllowed(path: readonly string[]): boolean {
  return path.length <= MAX_COLUMN_DEPTH && path.every((key) => LITERAL_KEY.test(key));
}

/** One event as a row: its collection, Unix seconds, `seq` (decimal text) and payload text. */
export interface TsvEvent {
  collection: string;
  timestamp: number;
  seq: string;
  payload: string;
  /** Set when `payload` is exactly what `JSON.stringify` writes for its object. */
  canonical?: boolean;
  /** The payload's object, when the caller holds it already. */
  json?: unknown;
}

/** A lone UTF-16 half: text that UTF-8 cannot carry as it is. */
const LONE_SURROGATE = /\p{Cs}/u;
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are what TSV escapes
const TSV_SPECIAL = /[\\\t\n\r\u0000]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are what TSV escapes
const TSV_SPECIALS = /[\\\t\n\r\u0000]/g;
const TSV_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
  '\u0000': '\\0',
};

/** A string field of TabSeparated text. */
export function tsvString(text: string): string {
  return TSV_SPECIAL.test(text)
    ? text.replace(TSV_SPECIALS, (c) => TSV_ESCAPES[c] as string)
    : text;
}

/**
 * The body of one insert: a header naming the columns, then one line per event. `forms` are
 * the paths to fill (at most those the table has columns for, unless the insert skips unknown
 * columns). Where JavaScript is not sure of a value's forms the field is left empty, which the
 * insert (`input_format_tsv_empty_as_default`) reads as the column's DEFAULT, ClickHouse's own
 * reading; an empty string form is left empty too, as its DEFAULT is the same empty string.
 */
export function tsvRows(events: readonly TsvEvent[], forms: readonly FormColumns[]): string {
  // Joined as text rather than written to the writer's buffer: the text goes on as a string, and
  // its UTF-8 bytes would only be decoded again.
  const lines = lineWriter;
  lines.reset(forms, false);
  let text = tsvHeader(forms);
  for (const event of events) text += lines.line(event);
  return text;
}

/** The header line of {@link tsvRows} text filling `forms`. */
export function tsvHeader(forms: readonly FormColumns[]): string {
  // `seq` last: a line then ends in digits, so the text keeps its meaning through clients that
  // trim a query's white space and a trailing `;`.
  const header = ['collection', 'timestamp', 'json'];
  for (const f of forms) header.push(f.number, f.string);
  header.push('seq');
  return header.join('\t');
}

/** String values whose form fields a {@link TsvRowWriter} remembers at most. */
const REMEMBERED_STRINGS = 4096;
/** The longest string value a {@link TsvRowWriter} remembers (longer ones are rarely repeated). */
const REMEMBERED_LENGTH = 100;

/** A value's two form fields, each after a tab (`\\N` for a form it has not). */
function formFields(number: number | null, string: string | null): string {
  return `\t${number === null ? '\\N' : String(number)}\t${string === null ? '\\N' : tsvString(string)}`;
}

/**
 * {@link tsvRows} one event at a time, into a buffer reused from insert to insert, so that no
 * event's strings outlive it (a parse worker writes a whole chunk this way).
 */
export class TsvRowWriter {
  #buffer = Buffer.allocUnsafe(1 << 20);
  #length = 0;
  #forms: readonly FormColumns[] = [];
  /** The forms' paths as a tree, and their values in the event being written. */
  #paths = new Map<string, PathNode>();
  #values: unknown[] = [];
  /** The collection {@link #prefix} is for; none after a reset. */
  #collection: string | undefined;
  #prefix = '';
  /** String values' form fields, by value ({@link #stringFields}). */
  readonly #strings = new Map<string, string>();

  /** Starts a new body, for `forms` (`header` false: for {@link line} alone). */
  reset(forms: readonly FormColumns[], header = true): void {
    if (forms !== this.#forms) {
      this.#forms = forms;
      this.#paths = pathTree(forms.map((f) => f.path));
      this.#values = new Array(forms.length);
    }
    this.#length = 0;
    this.#collection = undefined;
    if (header) this.#write(tsvHeader(forms));
  }

  add(event: TsvEvent): void {
    this.#write(this.line(event));
  }

  /** The event's line, starting with a newline, without writing it. */
  line(event: TsvEvent): string {
    if (event.collection !== this.#collection) {
      this.#collection = event.collection;
      this.#prefix = `${tsvString(event.collection)}\t`;
    }
    let line = `\n${this.#prefix}${event.timestamp}\t${tsvString(event.payload)}`;
    const forms = this.#forms;
    const payload = event.payload;
    if (forms.length > 0) {
      // Well-formed text without a `\u` escape holds no lone UTF-16 half in any of its values.
      const plain = payload.isWellFormed() && !payload.includes('\\u');
      // Compact text without any escape is read without parsing it (its strings are plain text).
      if (
        event.canonical &&
        event.json === undefined &&
        plain &&
        payload.charCodeAt(0) === 0x7b &&
        !payload.includes('\\') &&
        valuesAt(payload, this.#paths, this.#values)
      ) {
        for (const at of this.#values) line += this.#fields(at, true, true);
      } else {
        const parsed =
          event.json !== undefined && event.canonical
            ? { value: event.json, canonical: true }
            : event.canonical
              ? { value: JSON.parse(payload) as unknown, canonical: true }
              : parsePayload(payload);
        for (const column of forms) {
          line += parsed
            ? this.#fields(valueAt(parsed.value, column.path), plain, parsed.canonical)
            : '\t\t';
        }
      }
    }
    return `${line}\t${event.seq}`;
  }

  /**
   * The two form fields of the value `at` of a payload (`plain`: its text holds no lone UTF-16
   * half), or two empty ones (its columns' DEFAULT) where JavaScript is unsure of them.
   */
  #fields(at: unknown, plain: boolean, canonical: boolean): string {
    if (plain && typeof at === 'string') return this.#stringFields(at);
    const value = formsOf(at, canonical);
    if (value === undefined || (value.string !== null && LONE_SURROGATE.test(value.string))) {
      return '\t\t';
    }
    return formFields(value.number, value.string);
  }

  /**
   * The two form fields of a string value holding no lone UTF-16 half, remembered for the
   * short values a body repeats (an event name, a country), up to {@link REMEMBERED_STRINGS}.
   */
  #stringFields(text: string): string {
    let fields = this.#strings.get(text);
    if (fields === undefined) {
      const value = formsOf(text);
      fields = value === undefined ? '\t\t' : formFields(value.number, value.string);
      if (text.length <= REMEMBERED_LENGTH) {
        if (this.#strings.size >= REMEMBERED_STRINGS) this.#strings.clear();
        this.#strings.set(text, fields);
      }
    }
    return fields;
  }

  /** The body written since {@link reset}. */
  text(): string {
    return this.#buffer.toString('utf8', 0, this.#length);
  }

  #write(text: string): void {
    // UTF-8 takes at most three bytes per UTF-16 unit.
    if (this.#length + text.length * 3 > this.#buffer.length) {
      const grown = Buffer.allocUnsafe(
        Math.max(this.#buffer.length * 2, this.#length + text.length * 3),
      );
      this.#buffer.copy(grown, 0, 0, this.#length);
      this.#buffer = grown;
    }
    this.#length += this.#buffer.write(text, this.#length, 'utf8');
  }
}

/** The writer whose lines {@link tsvRows} joins, reused from call to call. */
const lineWriter = new TsvRowWriter();
