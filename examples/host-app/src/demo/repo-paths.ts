import { fileURLToPath } from 'node:url';

/** The monorepo's root: the demo composes packages and examples by their place in it. */
export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** A path inside the monorepo. */
export function repoPath(...parts: string[]): string {
  return fileURLToPath(new URL(parts.join('/'), new URL('../../../../', import.meta.url)));
}
