import { READ_ONLY_SQL } from '@analytics-chart/protocol';
import { EngineError, QUERY_TIMED_OUT } from '../../engine-error.ts';
import { OUT_OF_MEMORY } from '../result-limits.ts';
import { clipQuoted, FILE_ACCESS_REFUSED } from './inspect-sql-ast.ts';

/** Error kinds whose message is about the query itself and safe to pass on once trimmed. */
const USER_ERRORS =
  /^(Parser|Binder|Catalog|Conversion|Invalid Input|Out of Range|Not implemented|Syntax|Constraint|Dependency|Invalid type|Mismatch Type|Type|Invalid|Parameter Not Allowed|Parameter Not Resolved|Sequence) Error: /;

/**
 * Turns a DuckDB failure into the one sentence a client may see. Only the first line survives
 * (no `LINE 1: …` excerpt of the SQL, no "Did you mean"/candidate lists that could name objects
 * of the database), long quoted fragments are shortened, absolute paths are removed, and errors
 * about files, I/O, permissions or internals are replaced by fixed sentences, so nothing of a
 * file, the instance or the SQL text reaches the answer.
 */
export function describeDuckDBError(error: unknown): EngineError {
  const raw = error instanceof Error ? error.message : String(error);
  const message = raw
    .replace(/^Failure running pending result task: /, '')
    .replace(/^Failed to extract statements: /, '');
  if (/^INTERRUPT Error/.test(message)) return new EngineError(504, QUERY_TIMED_OUT);
  if (/^Out of Memory Error/i.test(message)) return new EngineError(400, OUT_OF_MEMORY);
  if (
    /^(Permission|IO|HTTP|Extension|Secret) Error/.test(message) ||
    /file system operations are disabled|external access|disabled by configuration/i.test(message)
  ) {
    return new EngineError(400, FILE_ACCESS_REFUSED);
  }
  if (/^TransactionContext Error:.*read-only/i.test(message)) {
    return new EngineError(400, READ_ONLY_SQL);
  }
  if (!USER_ERRORS.test(message)) {
    return new EngineError(400, 'The database could not run this query');
  }
  let line = (message.split('\n')[0] ?? '').trim();
  line = line.replace(/\s*Did you mean.*$/i, '').replace(/\s*LINE \d+:.*$/, '');
  line = line.replace(/(^|[\s"'(=])(?:[A-Za-z]:)?[/\\][^\s"')]*[/\\][^\s"')]*/g, '$1<path>');
  line = clipQuoted(line);
  if (line.length > 300) line = `${line.slice(0, 297)}...`;
  return new EngineError(400, line.replace(/^Parser Error: /, 'SQL syntax error: '));
}
