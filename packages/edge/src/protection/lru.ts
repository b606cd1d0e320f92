/**
 * A bounded map that forgets the least recently used entries first, approximately: two
 * generations, `young` and `old`. Hits in the young generation cost one lookup and no
 * reordering (the hot path reads this map several times per request); hits in the old one are
 * promoted. When the young generation fills half the capacity, the old one is dropped and the
 * young one takes its place, so at most `maxEntries` are kept and nothing used within the last
 * half-capacity of insertions is ever forgotten.
 */
export class Lru<K, V> {
  readonly #half: number;
  #young = new Map<K, V>();
  #old = new Map<K, V>();

  constructor(maxEntries: number) {
    this.#half = Math.max(1, Math.floor(maxEntries / 2));
  }

  get(key: K): V | undefined {
    const value = this.#young.get(key);
    if (value !== undefined) return value;
    const old = this.#old.get(key);
    if (old !== undefined) {
      this.#old.delete(key);
      this.#insert(key, old);
    }
    return old;
  }

  set(key: K, value: V): void {
    this.#old.delete(key);
    if (this.#young.has(key)) this.#young.set(key, value);
    else this.#insert(key, value);
  }

  #insert(key: K, value: V): void {
    if (this.#young.size >= this.#half) {
      this.#old = this.#young;
      this.#young = new Map();
    }
    this.#young.set(key, value);
  }

  delete(key: K): void {
    this.#young.delete(key);
    this.#old.delete(key);
  }

  clear(): void {
    this.#young.clear();
    this.#old.clear();
  }

  get size(): number {
    return this.#young.size + this.#old.size;
  }
}
