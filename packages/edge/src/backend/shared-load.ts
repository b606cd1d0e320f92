import type { LoadedResult } from '../protection/result-cache.ts';
import type { SharedResults } from '../store/edge-store.ts';

/** How long a replica waits for another one's load before loading itself. */
const WAIT_MS = 2000;
/** How often it looks for that answer meanwhile. */
const POLL_MS = 25;
/** The longest a load lock is held, should its holder die mid-load. */
const LOCK_MS = 15_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One load per freshness window across replicas: a fresh answer another replica stored is used
 * as is; otherwise the replica that takes the key's lock loads and stores, and the others wait
 * (at most {@link WAIT_MS}) for that answer. When the shared store fails, or the wait runs out,
 * the replica loads by itself: the shared cache saves engine queries, it never stops a chart.
 */
export async function sharedLoad(
  shared: SharedResults,
  key: string,
  ttlMs: number,
  staleMs: number,
  load: () => Promise<LoadedResult>,
): Promise<LoadedResult> {
  // An answer loaded after this request arrived is as fresh as one it could load itself, even
  // when a stalled process read it after the freshness window had passed.
  const asked = Date.now();
  const freshAt = (r: { fetchedAt: number }) =>
    r.fetchedAt >= asked || Date.now() < r.fetchedAt + ttlMs;
  try {
    const found = await shared.read(key);
    if (found && freshAt(found)) return found;
    // Wait for the holder's answer; a holder that finished without one (its load failed)
    // leaves the lock free, and this replica loads in turn.
    const until = Date.now() + WAIT_MS;
    while (!(await shared.lock(key, LOCK_MS))) {
      if (Date.now() >= until) return await load();
      await sleep(POLL_MS);
      const theirs = await shared.read(key);
      if (theirs && freshAt(theirs)) return theirs;
    }
  } catch {
    return load();
  }
  try {
    // The holder may have stored its answer and let go between this replica's last look and its
    // lock: look once more before loading.
    const theirs = await shared.read(key).catch(() => undefined);
    if (theirs && freshAt(theirs)) return theirs;
    const loaded = await load();
    const fetchedAt = Date.now();
    await shared.write(key, { ...loaded, fetchedAt }, ttlMs + staleMs).catch(() => {});
    return { ...loaded, fetchedAt };
  } finally {
    shared.unlock(key).catch(() => {});
  }
}
