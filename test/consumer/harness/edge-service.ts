import { inject } from 'vitest';
import { type Started, startProcess } from './processes.ts';

/**
 * Starts `npx analytics-edge serve` in an installed edge-service project with its JSON config,
 * in front of the suite's engine, on a free port under `/analytics`.
 */
export async function startEdgeService(
  dir: string,
  env: Record<string, string> = {},
): Promise<{ url: string; process: Started }> {
  const { engineUrl, apiKey, signingKeys } = inject('consumer');
  const process = await startProcess(
    'npx',
    [
      '--no',
      'analytics-edge',
      'serve',
      '--config',
      'analytics-edge.config.json',
      '--port',
      '0',
      '--base-path',
      '/analytics',
    ],
    {
      cwd: dir,
      env: {
        NODE_OPTIONS: '',
        EDGE_SIGNING_KEYS: signingKeys,
        ANALYTICS_BASE_URL: engineUrl,
        ANALYTICS_API_KEY: apiKey,
        ...env,
      },
      ready: /listening on (http:\/\/\S+)/,
    },
  );
  return { url: process.match[1] as string, process };
}
