import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Global setup: builds the packages whose `dist/` is missing or older than their sources (a no-op
 * under `pnpm test`, which builds first), so the CLI tests run the compiled CLI users install even
 * when this suite runs on its own after an edit.
 */
export default function setup(): void {
  const script = fileURLToPath(new URL('../../../scripts/build-packages.mjs', import.meta.url));
  const built = spawnSync(process.execPath, [script], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('building the packages failed');
}
