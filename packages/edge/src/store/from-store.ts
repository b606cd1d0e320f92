import { EdgeError } from '../http/edge-error.ts';
import type { Logger } from '../log/logger.ts';
import { StoreUnavailableError } from './edge-store.ts';

/**
 * Runs `work` against the store; a store that cannot answer becomes a 503 the caller may retry
 * (`message` says what is unavailable) and one `event` log line, never a stack trace.
 */
export async function fromStore<T>(
  logger: Logger,
  event: string,
  message: string,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    logger.log({ level: 'error', event, message: error.message });
    throw new EdgeError('backend', message, { status: 503, retryAfter: 1 });
  }
}
