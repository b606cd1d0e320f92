import { createHash, timingSafeEqual } from 'node:crypto';
import { INVALID_API_KEY } from '@analytics-chart/protocol';
import { EngineError } from '../engine-error.ts';

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

/**
 * The workspace a request body's `api_key` opens, and the body without the key. Refuses with
 * the protocol's `Invalid API KEY` (400) a body that is not an object or whose key is unknown.
 */
export function authenticate<W>(
  keys: ApiKeys,
  workspaces: ReadonlyMap<string, W>,
  body: unknown,
): { workspace: W; request: Record<string, unknown> } {
  const request =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? { ...(body as Record<string, unknown>) }
      : undefined;
  const name = keys.workspaceOf(request?.api_key);
  const workspace = name === undefined ? undefined : workspaces.get(name);
  if (!request || !workspace) throw new EngineError(400, INVALID_API_KEY);
  delete request.api_key;
  return { workspace, request };
}
