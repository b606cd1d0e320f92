import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * The element's one-file bundle, found through the element package's export
 * (`@analytics-chart/element/analytics-chart.js`), as any host that installed it finds it. In the
 * workspace the package's `dist/` is built at install and by `pnpm start` when stale.
 */
export function elementBundlePath(): string {
  const path = require.resolve('@analytics-chart/element/analytics-chart.js');
  if (!existsSync(path)) {
    throw new Error(`${path} is missing: run \`node scripts/build-packages.mjs\` to build it`);
  }
  return path;
}
