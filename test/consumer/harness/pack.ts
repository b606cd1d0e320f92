import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runOk } from './processes.ts';

/** The repository's root directory. */
export const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/** The packages users install, in dependency (and so publish) order. */
export const PACKAGES = ['protocol', 'engine', 'edge', 'element'] as const;
export type PackageName = (typeof PACKAGES)[number];

/**
 * Packs every package with `pnpm pack` (whose prepack builds a stale `dist/`, and which rewrites
 * `workspace:` ranges and publishConfig) into `dest`; answers each package's tarball path. Stale
 * packages are built first, once, so the packs that then run side by side find nothing to build.
 */
export async function packAll(dest: string): Promise<Record<PackageName, string>> {
  mkdirSync(dest, { recursive: true });
  await runOk(process.execPath, [join(REPO, 'scripts/build-packages.mjs')], {
    cwd: REPO,
    timeoutMs: 300_000,
  });
  const tarballs = {} as Record<PackageName, string>;
  await Promise.all(
    PACKAGES.map((name) =>
      runOk('pnpm', ['pack', '--pack-destination', dest], {
        cwd: join(REPO, 'packages', name),
        timeoutMs: 300_000,
      }),
    ),
  );
  for (const name of PACKAGES) {
    const file = readdirSync(dest).find((f) => f.startsWith(`analytics-chart-${name}-`));
    if (!file) throw new Error(`pnpm pack left no tarball for ${name}`);
    tarballs[name] = join(dest, file);
  }
  return tarballs;
}
