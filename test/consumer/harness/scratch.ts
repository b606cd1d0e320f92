import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { type PackageName, REPO } from './pack.ts';
import { runOk } from './processes.ts';

/** A fixture's directory in the repository. */
export function fixturePath(name: string): string {
  return join(REPO, 'test/consumer/fixtures', name);
}

/** How a scratch project is installed. */
export interface InstallOptions {
  /** Leave out devDependencies (tools the suite brings itself, pinned in its lockfile). */
  omitDev?: boolean;
}

/**
 * Copies a fixture project (test/consumer/fixtures/<name>) into a directory outside the
 * workspace and runs `npm install` there with the packed tarballs in place of the
 * `@analytics-chart/*` ranges its package.json names (the protocol always comes along, as the
 * registry would bring it). Installed once per suite run; later calls answer the same directory.
 */
export async function scratchProject(
  root: string,
  tarballs: Record<PackageName, string>,
  name: string,
  options: InstallOptions = {},
): Promise<string> {
  const dir = join(root, name);
  const marker = join(dir, '.installed');
  if (existsSync(marker)) return dir;
  cpSync(fixturePath(name), dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  const ours = Object.keys(manifest.dependencies ?? {})
    .filter((dep) => dep.startsWith('@analytics-chart/'))
    .map((dep) => dep.slice('@analytics-chart/'.length) as PackageName);
  const specs = [...new Set<PackageName>(['protocol', ...ours])].map((p) => tarballs[p]);
  const omit = options.omitDev ? ['--omit=dev'] : [];
  await runOk(
    'npm',
    ['install', '--no-audit', '--no-fund', '--loglevel=error', ...omit, ...specs],
    {
      cwd: dir,
      timeoutMs: 600_000,
    },
  );
  writeFileSync(marker, '');
  return dir;
}

/** {@link scratchProject} with the suite's shared root and tarballs. */
export function installed(name: string, options: InstallOptions = {}): Promise<string> {
  const { root, tarballs } = inject('consumer');
  return scratchProject(root, tarballs, name, options);
}
