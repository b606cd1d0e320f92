import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client-web';
import type { ClickHouseOptions } from './clickhouse-driver.ts';
import { nodeHttpFetch } from './node-http-fetch.ts';
import { retryClosedConnection } from './retry-closed-connection.ts';

/** Requests one client keeps open at once (the Node implementation's default socket cap). */
export const MAX_OPEN_REQUESTS = 10;

/** What a client of {@link connectClickHouse} is for. */
export interface ConnectionOptions {
  /** The current database of its queries (SQL mode's unqualified names resolve in it). */
  database?: string;
  /** How long it waits for an answer before giving up on the request. */
  requestTimeoutMs: number;
}

/**
 * A client of ClickHouse's HTTP interface: the official client's Web API implementation (the
 * Node implementation defers each request by a timer tick and streams its body), its requests
 * sent over Node's own HTTP client with pooled connections (`node-http-fetch.ts`), which costs a
 * request less than the platform's `fetch`.
 */
export function connectClickHouse(
  clickhouse: ClickHouseOptions,
  { database, requestTimeoutMs }: ConnectionOptions,
): ClickHouseClient {
  return createClient({
    url: clickhouse.url,
    username: clickhouse.username ?? 'default',
    password: clickhouse.password ?? '',
    ...(database ? { database } : {}),
    // The client's own log prints queries and their parameters; failures reach logError.
    log: { level: ClickHouseLogLevel.OFF },
    request_timeout: requestTimeoutMs,
    // This is fetch's `keepalive` (a request that may outlive its page, whose body the fetch
    // standard caps at 64 KiB), not connection reuse, and a batch of events is often larger.
    keep_alive: { enabled: false },
    // Answers uncompressed: the engine's answers are small, and gzip costs both ends more time
    // than it saves on the wire to a nearby ClickHouse.
    compression: { response: false, request: false },
    // Capped at MAX_OPEN_REQUESTS connections; a POST whose pooled connection was closed under
    // it is sent again here, as no fetch does it by itself.
    fetch: retryClosedConnection(nodeHttpFetch(MAX_OPEN_REQUESTS)),
  });
}
