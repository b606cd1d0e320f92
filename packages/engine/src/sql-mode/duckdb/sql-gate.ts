/**
 * Caps how many SQL-mode queries run at once in the process. DuckDB's Node binding runs every
 * query on libuv's small worker pool (4 threads by default), which ingest, collection-mode queries
 * and file I/O share: without a cap, a few heavy SQL queries could hold every worker until their
 * time limits and stall the rest of the engine. Queued queries wait in order; the wait counts
 * against their own time limit.
 */
export class SqlGate {
  #active = 0;
  readonly #waiting: Array<() => void> = [];

  /** @param slots queries allowed to run at once (default 2, half of libuv's default pool). */
  constructor(readonly slots = 2) {
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError('slots must be at least 1');
  }

  /** Queries running now. */
  get active(): number {
    return this.#active;
  }

  /**
   * Waits for a slot, at most `timeoutMs`. Resolves with a release function to call exactly
   * once, or with null when the wait ran out (the caller answers "timed out").
   */
  enter(timeoutMs: number): Promise<(() => void) | null> {
    if (this.#active < this.slots) {
      this.#active++;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.#active++;
        resolve(this.#releaser());
      };
      const timer = setTimeout(() => {
        const at = this.#waiting.indexOf(wake);
        if (at >= 0) this.#waiting.splice(at, 1);
        resolve(null);
      }, timeoutMs);
      this.#waiting.push(wake);
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#active--;
      this.#waiting.shift()?.();
    };
  }
}

/** The gate SQL mode uses unless a caller passes its own. */
export const defaultSqlGate = new SqlGate();
