import { ClickHouseError } from '@clickhouse/client-web';
import type { StorageFailure } from '../storage-failure.ts';

/** Codes of a connection that could not be made or broke: the system's, and undici's own. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * The system's or undici's code of a failure to talk to ClickHouse at all (as opposed to
 * ClickHouse refusing a query). `fetch` reports one as a TypeError (`fetch failed`, or
 * `terminated` when the connection broke during the answer) whose `cause` carries the code.
 */
export function connectionCode(error: unknown): string | undefined {
  if (error instanceof ClickHouseError) return undefined;
  let cause: unknown = error;
  for (let depth = 0; depth < 3 && cause instanceof Error; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_CODES.has(code)) return code;
    cause = cause.cause;
  }
  return undefined;
}

/** True for a failure to talk to ClickHouse at all (see {@link connectionCode}). */
export function isConnectionError(error: unknown): boolean {
  return connectionCode(error) !== undefined;
}

/** Codes of a connection that was open and then closed or reset by the other side. */
const CLOSED_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/**
 * True where the connection under a request was closed by the other side, as a pooled
 * keep-alive connection is when ClickHouse, or a load balancer before it, drops it idle just as
 * a request goes out; not where it could not be made or timed out.
 */
export function isClosedConnection(error: unknown): boolean {
  const code = connectionCode(error);
  return code !== undefined && CLOSED_CODES.has(code);
}

/**
 * ClickHouse's message for a SQL-mode user whose own SQL was refused: without its code prefix,
 * version suffix and exception name, and without the SQL ClickHouse quotes back (`In scope
 * SELECT …`, a syntax error's excerpt), which would also show what the engine sent with it.
 */
export function clickHouseMessage(error: ClickHouseError): string {
  const syntax = /Syntax error: failed at position (\d+)[\s\S]*?\((line \d+, col \d+)\)/.exec(
    error.message,
  );
  if (syntax) return `Syntax error at position ${syntax[1]} (${syntax[2]})`;
  return (
    error.message
      .replace(/\s*\(version [^)]*\)\s*$/, '')
      // Where ClickHouse was in the query: `while executing 'FUNCTION throwIf(…)'` quotes it.
      .replace(/[.:]?\s*while (executing|processing)\b[\s\S]*$/i, '')
      .replace(/\.?:?\s*in scope [\s\S]*?(\. Maybe you meant|$)/i, '$1')
      .replace(/\s+$/, '')
      .replace(/\.$/, '')
  );
}

/** The limits that ClickHouse enforces for the engine, as the failures the engine answers for. */
export function limitFailure(error: unknown): StorageFailure | undefined {
  if (!(error instanceof ClickHouseError)) return undefined;
  if (error.type === 'TIMEOUT_EXCEEDED') return 'timed-out';
  if (error.type === 'MEMORY_LIMIT_EXCEEDED') return 'out-of-memory';
  return undefined;
}
