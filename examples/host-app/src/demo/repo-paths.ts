import { fileURLToPath } from 'node:url';

/** A path inside the monorepo: the demo composes packages and examples by their place in it. */
export function repoPath(...parts: string[]): string {
  return fileURLToPath(new URL(parts.join('/'), new URL('../../../../', import.meta.url)));
}
