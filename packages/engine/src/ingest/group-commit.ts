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
  /**
   * While writers are concurrent (the last commit carried more than one item), a commit that
   * could start waits up to `ms` after the previous one ended for `size` to gather or for the
   * writers of the previous commit to be back beside those that were waiting, so that
   * concurrent writers share fewer, larger writes; a lone writer never waits.
   */
  gather?: { size: number; ms: number };
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
  /** The size of the items in {@link #pending}. */
  #pendingSize = 0;
  #running = 0;
  /** Items of the last group taken. */
  #lastGroup = 0;
  /** Items waiting once the writers of the last commit are back: no wait is worth more. */
  #backAt = 0;
  /** When the last commit ended (`performance.now()`). */
  #lastEnd = 0;
  /** The timer that starts a commit once its gathering time is over. */
  #gathering: ReturnType<typeof setTimeout> | undefined;
  readonly #idle: Array<() => void> = [];

  constructor(commit: (items: T[]) => Promise<void>, options: GroupCommitOptions<T>) {
    this.#commit = commit;
    this.#options = options;
  }

  /** Resolves once the item is committed. */
  submit(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ item, resolve, reject });
      this.#pendingSize += this.#options.sizeOf(item);
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
      if (this.#gather()) return;
      clearTimeout(this.#gathering);
      this.#gathering = undefined;
      const group = this.#takeGroup();
      this.#lastGroup = group.length;
      this.#running++;
      this.#run(group).finally(() => {
        this.#running--;
        this.#lastEnd = performance.now();
        this.#backAt = this.#pending.length + group.length;
        this.#pump();
        if (this.#running === 0 && this.#pending.length === 0) {
          for (const resolve of this.#idle.splice(0)) resolve();
        }
      });
    }
  }

  /**
   * Whether the next commit waits for more items to gather (see `gather`); if so, a timer
   * starts it when the time is over.
   */
  #gather(): boolean {
    const gather = this.#options.gather;
    if (!gather || this.#lastGroup <= 1 || this.#pendingSize >= gather.size) return false;
    // Waiting longer would idle both sides for a writer that may not come.
    if (this.#pending.length >= this.#backAt) return false;
    if (this.#pending.some((waiting) => waiting.alone)) return false;
    const left = this.#lastEnd + gather.ms - performance.now();
    if (left <= 0) return false;
    this.#gathering ??= setTimeout(() => {
      this.#gathering = undefined;
      this.#lastEnd = Number.NEGATIVE_INFINITY;
      this.#pump();
    }, left);
    return true;
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
    const group = this.#pending.splice(0, take);
    for (const waiting of group) this.#pendingSize -= this.#options.sizeOf(waiting.item);
    return group;
  }

  async #run(group: Waiting<T>[]): Promise<void> {
    try {
      await this.#commit(group.map((waiting) => waiting.item));
      for (const waiting of group) waiting.resolve();
    } catch (error) {
      if (group.length === 1) (group[0] as Waiting<T>).reject(error);
      else {
        for (const waiting of group) {
          waiting.alone = true;
          this.#pendingSize += this.#options.sizeOf(waiting.item);
        }
        this.#pending.unshift(...group);
      }
    }
  }
}
