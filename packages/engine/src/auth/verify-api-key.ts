import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Finds the workspace whose key a request carries, in constant time: both sides are reduced to
 * SHA-256 digests (equal length whatever the input) and compared with `timingSafeEqual`, and
 * every workspace is compared, so timing reveals neither the key nor which workspace matched.
 */
export class ApiKeys {
  readonly #digests: Array<{ workspace: string; digest: Buffer }>;

  constructor(workspaces: Record<string, string>) {
    this.#digests = Object.entries(workspaces).map(([workspace, key]) => ({
      workspace,
      digest: digest(key),
    }));
  }

  /** The workspace of `key`, or undefined for a missing, empty or unknown key. */
  workspaceOf(key: unknown): string | undefined {
    if (typeof key !== 'string' || key.length === 0) return undefined;
    const given = digest(key);
    let match: string | undefined;
    for (const { workspace, digest: expected } of this.#digests) {
      if (timingSafeEqual(given, expected) && match === undefined) match = workspace;
    }
    return match;
  }
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}
