import { isAbsolute, resolve } from 'node:path';

/**
 * Resolves a path given on the command line against the directory the user ran the command
 * from. `pnpm --filter … cli` runs us inside the package directory, so `process.cwd()` is not
 * that directory; pnpm records the original one in `INIT_CWD`.
 */
export function resolveUserPath(path: string): string {
  return isAbsolute(path) ? path : resolve(process.env.INIT_CWD ?? process.cwd(), path);
}
