import type { ClickHouseClient } from '@clickhouse/client-web';

/**
 * The oldest ClickHouse the engine's statements run on: its ranking statements filter window
 * functions with `QUALIFY`, which ClickHouse reads from 24.4.
 */
export const MIN_CLICKHOUSE_VERSION: readonly [number, number] = [24, 4];

/** A ClickHouse too old for the engine's statements, named before any workspace is touched. */
export class ClickHouseVersionError extends Error {
  override name = 'ClickHouseVersionError';
  constructor(readonly version: string) {
    super(
      `ClickHouse ${MIN_CLICKHOUSE_VERSION.join('.')} or newer is needed; this server is ${version}`,
    );
  }
}

/**
 * True when `version` (`version()`'s text, e.g. `24.8.4.13`) is at least
 * {@link MIN_CLICKHOUSE_VERSION}; a text that is no version is taken as new enough, so an
 * unusual build string never blocks a server that may well be current.
 */
export function supportedClickHouseVersion(version: string): boolean {
  const match = /^(\d+)\.(\d+)/.exec(version.trim());
  if (!match) return true;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  const [minMajor, minMinor] = MIN_CLICKHOUSE_VERSION;
  return major > minMajor || (major === minMajor && minor >= minMinor);
}

/** Asks the server its version and throws {@link ClickHouseVersionError} when it is too old. */
export async function checkClickHouseVersion(client: ClickHouseClient): Promise<void> {
  const result = await client.query({ query: 'SELECT version() AS v', format: 'JSONEachRow' });
  const [row] = await result.json<{ v: string }>();
  const version = String(row?.v ?? '');
  if (!supportedClickHouseVersion(version)) throw new ClickHouseVersionError(version);
}
