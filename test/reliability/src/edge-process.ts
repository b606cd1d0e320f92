/** The edge in its own Node process (`edge-child.ts`), configured like a deployment. */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { EdgeConfig } from '@analytics-chart/edge';
import { type ServerProcess, startServerProcess } from './child-process.ts';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const ENTRY = join(import.meta.dirname, 'edge-child.ts');

/** The environment of a deployment plus the code-side settings the items vary. */
export interface EdgeProcessOptions {
  /** `EDGE_SIGNING_KEYS`: `kid:secret[,kid:secret…]`, current first. */
  signingKeys: string;
  apiKey: string;
  baseUrl: string;
  sessionSecret: string;
  timeoutMs?: number;
  retries?: number;
  revokedIds?: readonly string[];
  allowedOrigins?: readonly string[];
  /** Code-side settings, serialised into the child (JSON values only). */
  settings?: Pick<EdgeConfig, 'cache' | 'rateLimit' | 'ids' | 'publicUrl'>;
}

/** Starts the edge process and resolves once it listens. */
export function startEdgeProcess(options: EdgeProcessOptions): Promise<ServerProcess> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    EDGE_SIGNING_KEYS: options.signingKeys,
    ANALYTICS_API_KEY: options.apiKey,
    ANALYTICS_BASE_URL: options.baseUrl,
    SESSION_SECRET: options.sessionSecret,
    RELIABILITY_EDGE_OPTIONS: JSON.stringify(options.settings ?? {}),
  };
  if (options.timeoutMs !== undefined) env.ANALYTICS_TIMEOUT_MS = String(options.timeoutMs);
  if (options.retries !== undefined) env.ANALYTICS_RETRIES = String(options.retries);
  if (options.revokedIds?.length) env.EDGE_REVOKED_IDS = options.revokedIds.join(',');
  if (options.allowedOrigins?.length) env.EDGE_ALLOWED_ORIGINS = options.allowedOrigins.join(',');
  return startServerProcess({
    command: process.execPath,
    // The heap probe (`heap-probe.ts`) forces collections only when the load item asks.
    args: ['--expose-gc', '--import', TSX, ENTRY],
    env,
    ipc: true,
    ready: /edge listening on (http:\/\/127\.0\.0\.1:\d+)/,
  });
}
