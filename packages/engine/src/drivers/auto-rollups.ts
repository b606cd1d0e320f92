import type { CollectionPlan } from '../collection/plan/collection-plan.ts';
import { AUTO_MIN_QUERIES, MAX_KEY_VALUES, type RollupSpec } from '../storage/rollup-spec.ts';
import { RollupUsage, type RollupUses } from '../storage/rollup-usage.ts';
import { rollupUses } from './rollup-uses.ts';

/** A workspace's rollups as automatic keys see them, on either driver. */
export interface ExtensibleRollups {
  /** What the rollups are kept by now, or undefined where the workspace keeps none. */
  spec(): RollupSpec | undefined;
  /** How many of the spec's keys and sums the engine added by itself. */
  added(): { keys: number; sums: number };
  /** The distinct string forms top-level key `name` has across the workspace's events. */
  keyValueCount(name: string): Promise<number>;
  /** Adds keys and sums to the rollups, answering the spec now kept (undefined: none). */
  extend(add: RollupUses): Promise<RollupSpec | undefined>;
}

/**
 * Automatic rollup keys, the same rule on both drivers: counts what each query would need rolled
 * up ({@link rollupUses}), and once keys or metrics are due ({@link RollupUsage.due}) adds them
 * beside the queries, one addition at a time, a key with more than {@link MAX_KEY_VALUES}
 * values refused first.
 */
export class AutoRollups {
  readonly #name: string;
  readonly #rollups: ExtensibleRollups;
  readonly #log: ((sentence: string) => void) | undefined;
  readonly #usage = new RollupUsage();
  #extending: Promise<void> | undefined;

  constructor(name: string, rollups: ExtensibleRollups, log?: (sentence: string) => void) {
    this.#name = name;
    this.#rollups = rollups;
    this.#log = log;
  }

  /** Counts one query's uses, and starts an addition when some are due. */
  observe(plan: CollectionPlan): void {
    const uses = rollupUses(plan);
    if (!uses) return;
    this.#usage.observe(uses);
    const spec = this.#rollups.spec();
    if (!spec || this.#extending) return;
    const due = this.#usage.due(spec, this.#rollups.added());
    if (due.keys.length === 0 && due.sums.length === 0) return;
    this.#extending = this.#extend(due).finally(() => {
      this.#extending = undefined;
    });
  }

  /** Waits for an addition under way. */
  async idle(): Promise<void> {
    await this.#extending;
  }

  async #extend(due: RollupUses): Promise<void> {
    const keys: string[] = [];
    try {
      for (const key of due.keys) {
        const values = await this.#rollups.keyValueCount(key);
        if (values > MAX_KEY_VALUES) this.#usage.refuse('key', key);
        else keys.push(key);
      }
      if (keys.length === 0 && due.sums.length === 0) return;
      const spec = await this.#rollups.extend({ keys, sums: due.sums });
      if (!spec) return;
      const added = [...keys.map((k) => `key ${k}`), ...due.sums.map((m) => `sums of ${m}`)].join(
        ', ',
      );
      this.#log?.(
        `workspace ${this.#name}: rollups now also kept by ${added} (used by at least ${AUTO_MIN_QUERIES} queries); keys ${spec.keys.join(', ') || 'none'}, sums ${spec.sums.join(', ') || 'none'}`,
      );
    } catch {
      // Not tried again until a restart: the rollups stay as they were, and answers the same.
      for (const key of keys) this.#usage.refuse('key', key);
      for (const sum of due.sums) this.#usage.refuse('sum', sum);
      this.#log?.(`workspace ${this.#name}: rollups could not be extended; they stay as they were`);
    }
  }
}
