import { isClosedConnection } from '../../storage/clickhouse/clickhouse-errors.ts';

/**
 * A `fetch` that sends a request once more when its connection turned out closed before any
 * answer came: a pooled keep-alive connection that ClickHouse, or a load balancer before it,
 * dropped as the request went out. `fetch` does not send a POST again by itself, and every
 * request to ClickHouse is a POST. Every request the engine sends may go twice: reads change
 * nothing, inserts carry a deduplication token, the catalog is a ReplacingMergeTree and the DDL
 * is idempotent (`IF NOT EXISTS`, `OR REPLACE`). A body that cannot be read twice goes once.
 */
export function retryClosedConnection(platform: typeof fetch): typeof fetch {
  // The answer passes straight through: only a failure comes back here, not every response.
  return (input, init) =>
    platform(input, init).catch((error: unknown) => {
      const body = init?.body;
      const replayable = body === undefined || body === null || typeof body === 'string';
      if (!replayable || init?.signal?.aborted || !isClosedConnection(error)) throw error;
      return platform(input, init);
    });
}
