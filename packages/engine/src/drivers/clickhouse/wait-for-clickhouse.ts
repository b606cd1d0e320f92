import { connectionCode } from '../../storage/clickhouse/clickhouse-errors.ts';

/** How long opening waits for a ClickHouse it cannot reach yet, by default. */
export const STARTUP_WAIT_MS = 30_000;

/** The pause between two attempts to reach ClickHouse. */
const RETRY_MS = 500;

/** What the web client throws when its own time limit ends a request. */
const CLIENT_TIMEOUT = 'Timeout error.';

/**
 * ClickHouse could not be reached when the engine opened it: a sentence naming where and why,
 * without a credential or the client's stack.
 */
export class ClickHouseUnreachableError extends Error {
  override name = 'ClickHouseUnreachableError';
  constructor(
    readonly url: string,
    readonly reason: string,
    waitedMs: number,
  ) {
    const waited = waitedMs >= 1_000 ? ` (tried for ${Math.round(waitedMs / 1_000)} s)` : '';
    super(`ClickHouse at ${url} could not be reached: ${reason}${waited}`);
  }
}

/**
 * Runs `first`, the first request to ClickHouse, again while ClickHouse cannot be reached, for
 * up to `waitMs`: an engine started beside its ClickHouse (a compose file, a restarted cluster)
 * waits for it instead of exiting. What ClickHouse itself answers (a wrong password, a refused
 * statement) is thrown at once. `log` hears once that the engine is waiting.
 */
export async function untilReachable<T>(
  target: string,
  waitMs: number,
  first: () => Promise<T>,
  log?: (sentence: string) => void,
): Promise<T> {
  const url = withoutCredentials(target);
  const started = Date.now();
  let told = false;
  for (;;) {
    try {
      return await first();
    } catch (error) {
      const reason = unreachable(error);
      if (reason === undefined) throw error;
      const waited = Date.now() - started;
      if (waited + RETRY_MS > waitMs) throw new ClickHouseUnreachableError(url, reason, waited);
      if (!told) log?.(`waiting for ClickHouse at ${url}: ${reason}`);
      told = true;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}

/** `url` as a log may show it: a user and password written into it (the CLI refuses them) left out. */
function withoutCredentials(url: string): string {
  try {
    const shown = new URL(url);
    shown.username = '';
    shown.password = '';
    return shown.toString();
  } catch {
    return '(a ClickHouse URL that does not parse)';
  }
}

/** Why a request could not reach ClickHouse, in words; undefined where ClickHouse answered. */
function unreachable(error: unknown): string | undefined {
  if (error instanceof Error && error.message === CLIENT_TIMEOUT) {
    return 'no answer within the request time limit';
  }
  // Undefined for ClickHouse's own answers (a ClickHouseError), which are not waited out.
  const code = connectionCode(error);
  if (code === undefined) return undefined;
  return REASONS[code] ?? `connection failed (${code})`;
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (name lookup failed)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
};
