/**
 * The engine as users run it: `analytics-engine serve` (the CLI behind `pnpm engine serve`) in
 * its own process, on an ephemeral loopback port, over a data directory (or a ClickHouse) that
 * outlives it.
 */

import { type ServerProcess, startServerProcess } from './child-process.ts';
import { ENGINE_BIN, REPO_ROOT } from './repo-paths.ts';

/** Where `serve --clickhouse` keeps the workspaces (the user is `default`). */
export interface ClickHouseTarget {
  url: string;
  password: string;
}

/**
 * Starts `analytics-engine serve --port 0 --data <dataDir>` with `apiKey` as workspace
 * `default`'s key, or with `clickhouse` `serve --clickhouse <url>` (credentials in the
 * environment, as users pass them; the data directory is then unused).
 */
export function startEngineProcess(
  dataDir: string,
  apiKey: string,
  clickhouse?: ClickHouseTarget,
): Promise<ServerProcess> {
  const storage = clickhouse ? ['--clickhouse', clickhouse.url] : ['--data', dataDir];
  const credentials = clickhouse
    ? { CLICKHOUSE_USER: 'default', CLICKHOUSE_PASSWORD: clickhouse.password }
    : {};
  return startServerProcess({
    command: process.execPath,
    args: [ENGINE_BIN, 'serve', '--port', '0', '--host', '127.0.0.1', ...storage],
    cwd: REPO_ROOT,
    env: { ...process.env, ANALYTICS_API_KEY: apiKey, NODE_ENV: 'production', ...credentials },
    ready: /analytics-engine listening on (http:\/\/127\.0\.0\.1:\d+)/,
  });
}
