/**
 * `pnpm --filter @analytics-chart/element test`: the element in real Chromium (Debian's, or
 * CHROME_PATH), TypeScript served through esbuild, the edge's browser routes played by the
 * fixture middleware on the dev server's own socket, and a real edge (Node, Hono) on another port
 * for the cross-origin tests. The CDN bundle is built before the run so its test loads the file a
 * host would serve.
 */
import { spawnSync } from 'node:child_process';
import { esbuildPlugin } from '@web/dev-server-esbuild';
import { chromeLauncher } from '@web/test-runner-chrome';
import { CHROME_PATH, CHROMIUM_ARGS, UNTHROTTLED_ARGS } from '../../scripts/chromium.mjs';
import { fixtureEdge } from './test/server/fixture-edge.mjs';
import { realEdgePlugin } from './test/server/real-edge-plugin.mjs';
import { serveBundle } from './test/server/serve-bundle.mjs';

const here = new URL('.', import.meta.url).pathname;

/**
 * Builds the package (dist/analytics-chart.js among it) before the browser starts when it is
 * missing or older than its sources: the freshness check of `pnpm test`, so a run beside other
 * suites never rewrites a bundle they are serving.
 */
function buildBundlePlugin() {
  return {
    name: 'build-cdn-bundle',
    serverStart() {
      const built = spawnSync(process.execPath, [`${here}../../scripts/build-packages.mjs`], {
        stdio: 'inherit',
      });
      if (built.status !== 0) throw new Error('building the element failed');
    },
  };
}

export default {
  rootDir: here,
  // 127.0.0.1 like the real edge, so a cookie set by a test page reaches the edge (same site).
  hostname: '127.0.0.1',
  files: ['test/**/*.test.ts'],
  nodeResolve: true,
  // One page at a time: a background tab gets no rendering, so no IntersectionObserver or rAF.
  concurrency: 1,
  concurrentBrowsers: 1,
  testsFinishTimeout: 240_000,
  middleware: [serveBundle(), fixtureEdge()],
  plugins: [esbuildPlugin({ ts: true, target: 'es2022' }), buildBundlePlugin(), realEdgePlugin()],
  browsers: [
    chromeLauncher({
      launchOptions: {
        executablePath: CHROME_PATH,
        // --expose-gc: the memory tests collect garbage before they measure.
        args: [...CHROMIUM_ARGS, '--js-flags=--expose-gc', ...UNTHROTTLED_ARGS],
      },
    }),
  ],
  testFramework: { config: { timeout: 15_000 } },
};
