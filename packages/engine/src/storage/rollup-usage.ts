import {
  AUTO_MIN_QUERIES,
  MAX_AUTO_KEYS,
  MAX_REMEMBERED_NAMES,
  MAX_ROLLUP_KEYS,
  type RollupSpec,
} from './rollup-spec.ts';

/** What one query would need rolled up to read rollups: top-level keys, and a metric's sums. */
export interface RollupUses {
  keys: readonly string[];
  sums: readonly string[];
}

/** A key or metric as the usage counts know it. */
type Role = 'key' | 'sum';

/** One remembered name: the queries that used it, and whether it was found unfit. */
interface Usage {
  queries: number;
  refused: boolean;
}

/**
 * How often a workspace's queries used each key and metric that rollups could hold, so that the
 * engine can add the ones worth keeping (with `auto`): a bounded count, which forgets the
 * least-used name (the oldest among equals) when a new one arrives and
 * {@link MAX_REMEMBERED_NAMES} are remembered, so that a name used often survives any number
 * of names used once.
 */
export class RollupUsage {
  readonly #names = new Map<string, Usage>();

  /** Counts one query's uses. */
  observe(uses: RollupUses): void {
    for (const name of new Set(uses.keys)) this.#count('key', name);
    for (const name of new Set(uses.sums)) this.#count('sum', name);
  }

  /** How many names are remembered. */
  get size(): number {
    return this.#names.size;
  }

  /** The queries that used a name, as remembered (0 when forgotten or never seen). */
  queries(role: Role, name: string): number {
    return this.#names.get(`${role}:${name}`)?.queries ?? 0;
  }

  /**
   * The names to add to `spec` now: used by at least {@link AUTO_MIN_QUERIES} queries, not
   * refused, not kept already, most used first, within {@link MAX_AUTO_KEYS} added names
   * (`added` says how many of the spec's are) and {@link MAX_ROLLUP_KEYS} in all, of each role.
   */
  due(spec: RollupSpec, added: { keys: number; sums: number }): RollupUses {
    const pick = (role: Role, kept: readonly string[], already: number) => {
      const room = Math.min(MAX_AUTO_KEYS - already, MAX_ROLLUP_KEYS - kept.length);
      if (room <= 0) return [];
      return [...this.#names]
        .filter(
          ([id, u]) => id.startsWith(`${role}:`) && !u.refused && u.queries >= AUTO_MIN_QUERIES,
        )
        .map(([id, u]) => ({ name: id.slice(role.length + 1), queries: u.queries }))
        .filter(({ name }) => !kept.includes(name))
        .sort((a, b) => b.queries - a.queries)
        .slice(0, room)
        .map(({ name }) => name);
    };
    return { keys: pick('key', spec.keys, added.keys), sums: pick('sum', spec.sums, added.sums) };
  }

  /** Marks a name unfit (a key with too many values), so that it is not proposed again. */
  refuse(role: Role, name: string): void {
    const usage = this.#names.get(`${role}:${name}`);
    if (usage) usage.refused = true;
  }

  #count(role: Role, name: string): void {
    const id = `${role}:${name}`;
    const usage = this.#names.get(id);
    if (usage) {
      usage.queries++;
      return;
    }
    if (this.#names.size >= MAX_REMEMBERED_NAMES) {
      let least: string | undefined;
      let fewest = Number.POSITIVE_INFINITY;
      for (const [other, u] of this.#names) {
        if (u.queries < fewest) {
          fewest = u.queries;
          least = other;
        }
      }
      if (least !== undefined) this.#names.delete(least);
    }
    this.#names.set(id, { queries: 1, refused: false });
  }
}
