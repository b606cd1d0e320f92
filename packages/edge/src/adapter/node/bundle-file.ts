import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { BundleSource } from '../../config/edge-config.ts';

/** Where the element package writes its one-file bundle in this monorepo. */
export const DEFAULT_BUNDLE_PATH = fileURLToPath(
  new URL('../../../../element/dist/analytics-chart.js', import.meta.url),
);

/**
 * A bundle source reading a file, re-read only when its modification time changes (so a rebuilt
 * element is served without a restart). Answers null while the file does not exist.
 */
export function bundleFile(path: string = DEFAULT_BUNDLE_PATH): BundleSource {
  let cached: { mtimeMs: number; size: number; bytes: Uint8Array } | undefined;
  return () => {
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(path);
    } catch {
      return null;
    }
    if (!cached || cached.mtimeMs !== stat.mtimeMs || cached.size !== stat.size) {
      cached = {
        mtimeMs: stat.mtimeMs,
        size: stat.size,
        bytes: new Uint8Array(readFileSync(path)),
      };
    }
    return cached.bytes;
  };
}
