import type { Logger } from '../log/logger.ts';
import { EdgeError } from './edge-error.ts';

/**
 * Refuses a request: logs why for the operator (`reason`, with the id's tag) and throws the
 * viewer's sentence as an {@link EdgeError}.
 */
export type Deny = (
  code: EdgeError['code'],
  message: string,
  tag: string,
  reason: string,
  status?: number,
) => never;

/** A {@link Deny} logging under `event`; an expired id is routine (info), any other refusal a warning. */
export function denier(logger: Logger, event: string): Deny {
  return (code, message, tag, reason, status) => {
    logger.log({
      level: code === 'expired' ? 'info' : 'warn',
      event,
      message: reason,
      code,
      id: tag,
    });
    throw new EdgeError(code, message, status === undefined ? {} : { status });
  };
}
