import { ClickHouseError } from '@clickhouse/client';
import type { StorageFailure } from '../storage-failure.ts';

/** True for a failure to talk to ClickHouse at all (as opposed to ClickHouse refusing a query). */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof ClickHouseError) return false;
  const code = (error as { code?: unknown } | null)?.code;
  return (
    typeof code === 'string' &&
    ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN'].includes(code)
  );
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
