/** One caller's item waiting in a {@link GroupCommit}. */
interface Waiting<T> {
  item: T;
  resolve(): void;
  reject(error: unknown): void;
  /** Set when the item is retried in a commit of its own. */
  alone?: boolean;
}

/** Options of a {@link GroupCommit}. */
export interface GroupCommitOptions<T> {
  /** Commits running at once. */
  concurrency: number;
  /** The size one commit gathers at most (an item larger than this still goes, alone). */
  maxSize: number;
  /** An item's size, e.g. its events. */
  sizeOf(item: T): number;
}

/**
 * Group commit: items queue up while commits are running; the next commit writes all of them at
 * once, and only then does each caller's promise resolve. So every acknowledged item is stored,
 * and concurrent writers share one write (one WAL sync, one insert) instead of paying for one
 * each. When a commit of several items fails, each is tried again alone, so only the culprit's
 * caller sees the error.
 */
export class GroupCommit<T> {
  readonly #commit: (items: T[]) => Promise<void>;
  readonly #options: GroupCommitOptions<T>;
  #pending: Waiting<T>[] = [];
  #running = 0;
  readonly #idle: Array<() => void> = [];

  constructor(commit: (items: T[]) => Promise<void>, options: GroupCommitOptions<T>) {
    this.#commit = commit;
    this.#options = options;
  }

  /** Resolves once the item is committed. */
  submit(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ item, resolve, reject });
      this.#pump();
    });
  }

  /** Resolves when everything submitted so far is committed (or failed). */
  idle(): Promise<void> {
    if (this.#running === 0 && this.#pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Starts commits for waiting items while fewer than `concurrency` run. */
  #pump(): void {
    while (this.#running < this.#options.concurrency && this.#pending.length > 0) {
      const group = this.#takeGroup();
      this.#running++;
      this.#run(group).finally(() => {
        this.#running--;
        this.#pump();
        if (this.#running === 0 && this.#pending.length === 0) {
          for (const resolve of this.#idle.splice(0)) resolve();
        }
      });
    }
  }

  /** The oldest waiting items, up to `maxSize`; an item to retry goes alone. */
  #takeGroup(): Waiting<T>[] {
    let size = 0;
    let take = 0;
    while (take < this.#pending.length) {
      const waiting = this.#pending[take] as Waiting<T>;
      const next = this.#options.sizeOf(waiting.item);
      if (take > 0 && (waiting.alone || size + next > this.#options.maxSize)) break;
      size += next;
      take++;
      if (waiting.alone) break;
    }
    return this.#pending.splice(0, take);
  }

  async #run(group: Waiting<T>[]): Promise<void> {
    try {
      await this.#commit(group.map((waiting) => waiting.item));
      for (const waiting of group) waiting.resolve();
    } catch (error) {
      if (group.length === 1) (group[0] as Waiting<T>).reject(error);
      else {
        for (const waiting of group) waiting.alone = true;
        this.#pending.unshift(...group);
      }
    }
  }
}
