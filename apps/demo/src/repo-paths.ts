import { fileURLToPath } from 'node:url';

/** A path inside the monorepo: the demo keeps its data in `.data/` and serves the example pages' templates. */
export function repoPath(...parts: string[]): string {
  return fileURLToPath(new URL(parts.join('/'), new URL('../../../', import.meta.url)));
}
