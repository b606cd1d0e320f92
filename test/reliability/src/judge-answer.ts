/**
 * The rules every refusal must follow, checked on raw answers: a 4xx (never 5xx, never no
 * answer), JSON `{error}` (the edge adds `code`) with one short sentence, and nothing that
 * belongs to the server: no stack, source path, internal SQL or table name, key or secret.
 */
import { READ_ONLY_SQL } from '@analytics-chart/protocol';
import type { RawResponse } from './raw-http.ts';

/**
 * Text that only the server could have produced. Flagged only when the request did not contain
 * it itself (a refusal may quote a bit of what was sent).
 */
const SERVER_TEXT = [
  '\n    at ',
  'node_modules',
  '/work/',
  '.ts:',
  'file://',
  '_engine',
  'events_',
  'INSERT INTO',
  'CREATE TABLE',
  'SELECT ',
  ' WHERE ',
  'TypeError',
  'RangeError',
  'SyntaxError',
  'ReferenceError',
  'Maximum call stack',
  'duckdb',
  'DuckDB',
  'Binder Error',
  'Parser Error',
  'Catalog Error',
  'Conversion Error',
];

/** Longest refusal sentence accepted (an answer echoing a huge input is itself a problem). */
export const MAX_ERROR_LENGTH = 600;

/** How a refusal should look for one server. */
export interface RefusalRules {
  /** The edge's refusals carry `{error, code}`; the engine's `{error}` only. */
  withCode: boolean;
  /** Strings that must never appear in any answer (keys, secrets). */
  secrets: readonly string[];
  /** Headers every answer must carry (name → exact value). */
  headers?: Readonly<Record<string, string>>;
}

/** Node's own HTTP parser refused the request before the app saw it (no JSON is possible). */
export function isParserRefusal(answer: RawResponse): boolean {
  return (
    (answer.status === 400 || answer.status === 431 || answer.status === 413) &&
    answer.body.length === 0 &&
    answer.headers['content-type'] === undefined
  );
}

/**
 * What is wrong with an answer (empty when it is right). A 2xx is accepted here (the caller
 * judges whether the input deserved it); `requestText` is what was sent, latin1-decoded.
 */
export function judgeAnswer(
  answer: RawResponse,
  rules: RefusalRules,
  requestText: string,
): string[] {
  const problems: string[] = [];
  if (answer.status === 0) return [`no answer (${answer.failure})`];
  if (answer.status >= 500) problems.push(`status ${answer.status}`);
  else if (answer.status < 200 || (answer.status >= 300 && answer.status < 400)) {
    problems.push(`status ${answer.status}`);
  }
  const whole = `${JSON.stringify(answer.headers)}\n${answer.text}`;
  for (const secret of rules.secrets) {
    if (secret && whole.includes(secret)) problems.push('a secret is in the answer');
  }
  for (const [name, value] of Object.entries(rules.headers ?? {})) {
    if (answer.headers[name.toLowerCase()] !== value)
      problems.push(`header ${name} is not ${value}`);
  }
  if (answer.status >= 400 && answer.status < 500) {
    if (!/^application\/json\b/.test(answer.headers['content-type'] ?? '')) {
      problems.push(`content-type ${answer.headers['content-type']}`);
    }
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return [...problems, `body is not JSON: ${answer.text.slice(0, 80)}`];
    }
    const keys = typeof body === 'object' && body !== null ? Object.keys(body).sort() : [];
    const expected = rules.withCode ? ['code', 'error'] : ['error'];
    if (JSON.stringify(keys) !== JSON.stringify(expected)) problems.push(`keys ${keys.join(',')}`);
    const error = (body as { error?: unknown }).error;
    if (typeof error !== 'string' || error.trim() === '') problems.push('error is not a sentence');
    else if (error.length > MAX_ERROR_LENGTH) problems.push(`error is ${error.length} characters`);
  }
  // Only refusals: a 2xx may return event payloads that earlier requests stored.
  if (answer.status >= 400) {
    // The spec's fixed sentence for SQL that is not a read-only SELECT names SELECT itself.
    const said = answer.text.replace(READ_ONLY_SQL, '');
    for (const text of SERVER_TEXT) {
      if (said.includes(text) && !requestText.includes(text)) {
        problems.push(`server text '${text.trim()}' in the answer`);
      }
    }
  }
  return problems;
}
