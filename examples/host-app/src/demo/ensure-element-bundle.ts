import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoPath } from './repo-paths.ts';

/** Where the element package writes the one-file bundle the edge serves. */
export const ELEMENT_BUNDLE = repoPath('packages/element/dist/analytics-chart.js');

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** Whether the bundle is missing or older than a source it is built from. */
export function bundleIsStale(): boolean {
  if (!existsSync(ELEMENT_BUNDLE)) return true;
  const element = repoPath('packages/element');
  const sources = ['src', 'build', 'vite.config.ts', 'package.json']
    .map((name) => join(element, name))
    .filter((path) => existsSync(path));
  const newest = Math.max(...sources.map(newestMtime));
  return statSync(ELEMENT_BUNDLE).mtimeMs < newest;
}

/**
 * Builds `packages/element/dist/analytics-chart.js` with the element's own Vite config when it is
 * missing or outdated (the same as `pnpm --filter @analytics-chart/element build:cdn`). The build
 * output is shown only when it fails.
 */
export async function ensureElementBundle(say: (line: string) => void): Promise<void> {
  if (!bundleIsStale()) return;
  const element = repoPath('packages/element');
  const vitePackage = createRequire(join(element, 'package.json')).resolve('vite/package.json');
  const viteBin = join(vitePackage, '..', 'bin', 'vite.js');
  say('Building the <analytics-chart> bundle (packages/element, vite build)…');
  const started = performance.now();
  const output: Buffer[] = [];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [viteBin, 'build'], {
      cwd: element,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0 || !existsSync(ELEMENT_BUNDLE)) {
    process.stderr.write(Buffer.concat(output));
    throw new Error('the element bundle did not build (output above)');
  }
  say(`  built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
