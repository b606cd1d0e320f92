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
 * True for a failure to talk to ClickHouse at all (as opposed to ClickHouse refusing a query).
 * `fetch` reports one as a TypeError (`fetch failed`, or `terminated` when the connection broke
 * during the answer) whose `cause` carries the code.
 */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof ClickHouseError) return false;
  let cause: unknown = error;
  for (let depth = 0; depth < 3 && cause instanceof Error; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
    cause = cause.cause;
  }
  return false;
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
  return error.message
    .replace(/\s*\(version [^)]*\)\s*$/, '')
    .replace(/\.?:?\s*in scope [\s\S]*?(\. Maybe you meant|$)/i, '$1')
    .replace(/\s+$/, '')
    .replace(/\.$/, '');
}

/** The limits that ClickHouse enforces for the engine, as the failures the engine answers for. */
export function limitFailure(error: unknown): StorageFailure | undefined {
  if (!(error instanceof ClickHouseError)) return undefined;
  if (error.type === 'TIMEOUT_EXCEEDED') return 'timed-out';
  if (error.type === 'MEMORY_LIMIT_EXCEEDED') return 'out-of-memory';
  return undefined;
}
