import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BundleSource } from '../../config/edge-config.ts';

/** Where the element package writes its one-file bundle in this monorepo. */
export const DEFAULT_BUNDLE_PATH = fileURLToPath(
  new URL('../../../../element/dist/analytics-chart.js', import.meta.url),
);

/** The element package's export of its one-file bundle. */
const BUNDLE_EXPORT = '@analytics-chart/element/analytics-chart.js';

function resolveFrom(base: string): string | null {
  try {
    const path = createRequire(base).resolve(BUNDLE_EXPORT);
    return existsSync(path) ? path : null;
  } catch {
    return null;
  }
}

/**
 * Finds the element's one-file bundle: through the element package's export, resolved first from
 * the working directory (the host app, which lists `@analytics-chart/element` among its
 * dependencies under any package manager's layout), then from this package (npm's flat
 * layout), then this monorepo's build. Null when none exists.
 */
export function findElementBundle(cwd: string = process.cwd()): string | null {
  return (
    resolveFrom(join(cwd, 'package.json')) ??
    resolveFrom(import.meta.url) ??
    (existsSync(DEFAULT_BUNDLE_PATH) ? DEFAULT_BUNDLE_PATH : null)
  );
}

/**
 * A bundle source reading a file, re-read only when its modification time changes (so a rebuilt
 * element is served without a restart). Answers null while the file does not exist. Without a
 * path it serves {@link findElementBundle}'s file.
 */
export function bundleFile(
  path: string | undefined = findElementBundle() ?? undefined,
): BundleSource {
  const file = path ?? DEFAULT_BUNDLE_PATH;
  let cached: { mtimeMs: number; size: number; bytes: Uint8Array } | undefined;
  return () => {
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(file);
    } catch {
      return null;
    }
    if (!cached || cached.mtimeMs !== stat.mtimeMs || cached.size !== stat.size) {
      cached = {
        mtimeMs: stat.mtimeMs,
        size: stat.size,
        bytes: new Uint8Array(readFileSync(file)),
      };
    }
    return cached.bytes;
  };
}
