import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { mustRun } from './run.ts';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * `pnpm pack` of a workspace package into `destination`, as a release would make it (pnpm rewrites
 * `workspace:` ranges and applies `publishConfig`). Builds first when the package has a build but
 * no `prepack` to run it. Returns the tarball's path.
 */
export async function packWorkspacePackage(dir: string, destination: string): Promise<string> {
  const cwd = `${root}packages/${dir}`;
  const { scripts = {} } = JSON.parse(readFileSync(`${cwd}/package.json`, 'utf8'));
  if (scripts.build && !scripts.prepack) await mustRun('pnpm', ['run', 'build'], cwd);
  const output = await mustRun('pnpm', ['pack', '--pack-destination', destination], cwd);
  const tarball = output
    .trim()
    .split('\n')
    .findLast((line) => line.endsWith('.tgz'));
  if (!tarball) throw new Error(`pnpm pack printed no tarball:\n${output}`);
  return tarball.startsWith('/') ? tarball : `${destination}/${tarball}`;
}

/** The paths inside a tarball, without npm's leading `package/`. */
export async function tarballFiles(tarball: string): Promise<string[]> {
  const listing = await mustRun('tar', ['-tzf', tarball], '/');
  return listing
    .split('\n')
    .filter(Boolean)
    .map((path) => path.replace(/^package\//, ''));
}
