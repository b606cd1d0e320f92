/** How the element retries transient failures: bounded attempts with exponential backoff. */
export interface RetryPolicy {
  /** Retries after the first attempt before giving up. */
  retries: number;
  /** Delay before the first retry, in milliseconds; doubles each time. */
  baseDelay: number;
  /** Upper bound for one delay, in milliseconds. */
  maxDelay: number;
}

/** Four retries after 1, 2, 4 and 8 seconds (±20 %): about 15 s before the error shows. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { retries: 4, baseDelay: 1000, maxDelay: 30_000 };

/**
 * Milliseconds to wait before retry number `attempt` (0-based). Jitter spreads the retries of many
 * charts on one page, or many viewers after an outage, so they do not arrive together.
 */
export function retryDelay(
  attempt: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  const exponential = Math.min(policy.maxDelay, policy.baseDelay * 2 ** attempt);
  return Math.round(exponential * (0.8 + 0.4 * random()));
}
