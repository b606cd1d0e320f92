import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';
import { inject } from 'vitest';
import { runOk } from './processes.ts';

// wrangler from npm, pinned in this package's devDependencies (projects list it for users).
const WRANGLER = fileURLToPath(new URL('../node_modules/.bin/wrangler', import.meta.url));

/** A Worker project built by wrangler and running under workerd. */
export interface BuiltWorker {
  mf: Miniflare;
  /** The files `wrangler deploy --dry-run` wrote to `dist/`. */
  outputs: string[];
}

/**
 * Builds an installed Worker project the way a user deploys it (`wrangler deploy --dry-run`:
 * wrangler's own esbuild, its Text rule for the element's bundle) and runs the output under
 * workerd (miniflare) with `bindings`, its rate-limiter Durable Object bound as wrangler.toml does.
 */
export async function buildAndRunWorker(
  dir: string,
  bindings: Record<string, string>,
): Promise<BuiltWorker> {
  const { root } = inject('consumer');
  await runOk(WRANGLER, ['deploy', '--dry-run', '--outdir', 'dist'], {
    cwd: dir,
    env: { WRANGLER_SEND_METRICS: 'false', XDG_CONFIG_HOME: join(root, '.config'), CI: '1' },
  });
  const outputs = readdirSync(join(dir, 'dist'));
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(dir, 'dist/worker.js'),
    modulesRoot: join(dir, 'dist'),
    modulesRules: [{ type: 'Text', include: ['**/*-analytics-chart.js'] }],
    compatibilityDate: '2025-01-01',
    durableObjects: { EDGE_RATE_LIMITER: 'RateLimiterObject' },
    bindings,
  });
  return { mf, outputs };
}
