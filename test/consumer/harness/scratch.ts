import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { inject } from 'vitest';
import { type PackageName, REPO } from './pack.ts';
import { runOk } from './processes.ts';

/** A fixture's directory in the repository. */
export function fixturePath(name: string): string {
  return join(REPO, 'test/consumer/fixtures', name);
}

/** An example folder of the repository (examples/<name>). */
export function examplePath(name: string): string {
  return join(REPO, 'examples', name);
}

/** How a scratch project is installed. */
export interface InstallOptions {
  /** Leave out devDependencies (tools the suite brings itself, pinned in its lockfile). */
  omitDev?: boolean;
  /** The folder to copy: a fixture's by default. */
  from?: string;
}

type Manifest = Record<'dependencies' | 'devDependencies', Record<string, string> | undefined>;

/**
 * Points every `@analytics-chart/*` range of the manifest (`workspace:*` in an example) at its
 * packed tarball, as a user replaces them with the published version.
 */
function pointAtTarballs(manifest: Manifest, tarballs: Record<PackageName, string>): PackageName[] {
  const ours = new Set<PackageName>();
  for (const deps of [manifest.dependencies, manifest.devDependencies]) {
    for (const dep of Object.keys(deps ?? {})) {
      if (!deps || !dep.startsWith('@analytics-chart/')) continue;
      const name = dep.slice('@analytics-chart/'.length) as PackageName;
      if (!tarballs[name]) throw new Error(`${dep} is not a published package`);
      deps[dep] = `file:${tarballs[name]}`;
      ours.add(name);
    }
  }
  return [...ours];
}

/**
 * Copies a fixture project (test/consumer/fixtures/<name>, or `options.from`) into a directory
 * outside the workspace, without its node_modules, and runs `npm install` there with the packed
 * tarballs in place of the `@analytics-chart/*` ranges its package.json names (the protocol
 * always comes along, as the registry would bring it). Installed once per suite run; later calls
 * answer the same directory. `--prefer-offline`: a package already in npm's cache is taken from it
 * without asking the registry again, as on a developer's machine that installed it before.
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
  cpSync(options.from ?? fixturePath(name), dir, {
    recursive: true,
    filter: (path) => !['node_modules', '.data'].includes(basename(path)),
  });
  const manifestPath = join(dir, 'package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
  const ours = pointAtTarballs(manifest, tarballs);
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  const specs = [...new Set<PackageName>(['protocol', ...ours])].map((p) => tarballs[p]);
  const omit = options.omitDev ? ['--omit=dev'] : [];
  await runOk(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--loglevel=error',
      ...omit,
      ...specs,
    ],
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

/** An example folder copied out of the workspace and installed like a fixture (`example-<name>`). */
export function installedExample(name: string, options: InstallOptions = {}): Promise<string> {
  return installed(`example-${name}`, { ...options, from: examplePath(name) });
}
