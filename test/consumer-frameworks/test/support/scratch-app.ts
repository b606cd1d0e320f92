import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { mustRun } from './run.ts';

/**
 * Copies one of the example apps (`react-app`, `preact-app`, `vue-app`, `svelte-app`) into `parent`, points its
 * `@analytics-chart/*` dependencies at the packed tarballs, and installs it with npm, as a user
 * with the published packages would (`--prefer-offline`: what npm's cache holds is not fetched
 * again). Returns the app's directory.
 */
export async function installScratchApp(
  name: string,
  parent: string,
  tarballs: Record<string, string>,
): Promise<string> {
  const dir = `${parent}/${name}`;
  cpSync(fileURLToPath(new URL(`../../${name}`, import.meta.url)), dir, {
    recursive: true,
    filter: (path) => !/\/(node_modules|dist)$/.test(path),
  });
  const manifest = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8'));
  // The element's tarball depends on the protocol's version, not yet on the registry: listing that
  // tarball here lets npm satisfy the dependency with it.
  for (const [pkg, tarball] of Object.entries(tarballs))
    manifest.dependencies[pkg] = `file:${tarball}`;
  writeFileSync(`${dir}/package.json`, `${JSON.stringify(manifest, null, 2)}\n`);
  await mustRun(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'],
    dir,
  );
  return dir;
}
