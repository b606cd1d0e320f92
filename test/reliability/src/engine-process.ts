/**
 * The engine as users run it: `analytics-engine serve` (the CLI behind `pnpm engine serve`) in
 * its own process, on an ephemeral loopback port, over a data directory that outlives it.
 */

import { type ServerProcess, startServerProcess } from './child-process.ts';
import { ENGINE_BIN, REPO_ROOT } from './repo-paths.ts';

/** Starts `analytics-engine serve --port 0 --data <dataDir>` with `apiKey` as workspace `default`'s key. */
export function startEngineProcess(dataDir: string, apiKey: string): Promise<ServerProcess> {
  return startServerProcess({
    command: process.execPath,
    args: [ENGINE_BIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data', dataDir],
    cwd: REPO_ROOT,
    env: { ...process.env, ANALYTICS_API_KEY: apiKey, NODE_ENV: 'production' },
    ready: /analytics-engine listening on (http:\/\/127\.0\.0\.1:\d+)/,
  });
}
