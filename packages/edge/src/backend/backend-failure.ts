import { EdgeError } from '../http/edge-error.ts';
import type { Logger } from '../log/logger.ts';
import { BackendError } from './backend.ts';

/**
 * The viewer's error for a failed backend call, after logging what the operator needs: a
 * rejected key is a configuration error, a time-out a 504, anything that is not a
 * {@link BackendError} a bug.
 */
export function backendFailure(logger: Logger, error: unknown, tag: string): EdgeError {
  if (!(error instanceof BackendError)) {
    logger.log({
      level: 'error',
      event: 'backend.bug',
      message: logger.scrub(String((error as Error)?.message ?? error)),
      id: tag,
    });
    return new EdgeError('backend', 'The analytics service could not answer.');
  }
  switch (error.kind) {
    case 'key_rejected':
      logger.log({
        level: 'error',
        event: 'backend.key_rejected',
        message:
          'CONFIGURATION ERROR: the analytics service answered "Invalid API KEY". Check the deployed ANALYTICS_API_KEY: was the key replaced, or does it carry stray whitespace? Not retried.',
        id: tag,
      });
      return new EdgeError(
        'backend',
        'The chart service is misconfigured; the site owner has been told.',
      );
    case 'timeout':
      logger.log({
        level: 'warn',
        event: 'backend.timeout',
        message: logger.scrub(error.message),
        id: tag,
      });
      return new EdgeError('timeout', 'The analytics service did not answer in time.');
    default:
      logger.log({
        level: 'error',
        event: `backend.${error.kind}`,
        message: logger.scrub(error.message),
        status: error.status,
        id: tag,
      });
      return new EdgeError(
        'backend',
        error.kind === 'refused'
          ? 'The analytics service could not run this query.'
          : 'The analytics service is unavailable.',
      );
  }
}
