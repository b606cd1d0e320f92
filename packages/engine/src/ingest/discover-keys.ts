/**
 * Key discovery: which key paths a batch of payloads holds and what kinds of value they hold
 * there, which decides the typed columns. Free of DuckDB, so the loader's parse workers run it.
 */

/** Objects nested deeper than this are kept whole, as a JSON string, at the last level. */
export const MAX_DEPTH = 6;

/** The kinds of JSON value that decide a key's columns (`null` counts as missing). */
export type ValueKind = 'string' | 'numeric string' | 'number' | 'boolean' | 'array' | 'object';

/** A key path found in a batch and the kinds of value it held there. */
export interface SeenKey {
  path: string[];
  kinds: Set<ValueKind>;
  children?: Map<string, SeenKey>;
}

/** Strings that may read as a number start with a digit, sign, dot or white space. */
const MAYBE_NUMERIC = /^[\s\d+\-.]/;

function kindOf(value: unknown): ValueKind | undefined {
  switch (typeof value) {
    case 'string':
      return MAYBE_NUMERIC.test(value) ? 'numeric string' : 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'object':
      if (value === null) return undefined;
      return Array.isArray(value) ? 'array' : 'object';
    default:
      return undefined;
  }
}

/**
 * Finds every key path in payload objects and the kinds of value each one holds, one object at
 * a time (so a parser can hand each object over and drop it). It reads every event, not a
 * sample, so a key without a column is a key no event has.
 */
export class KeyDiscovery {
  readonly #top = new Map<string, SeenKey>();
  /** The key paths found so far, parents before their children. */
  readonly keys: SeenKey[] = [];

  /** Walks one payload object. */
  add(object: Record<string, unknown>): void {
    this.#walk(object, this.#top, []);
  }

  #walk(object: Record<string, unknown>, level: Map<string, SeenKey>, parent: string[]): void {
    for (const key in object) {
      const value = object[key];
      let node = level.get(key);
      if (!node) {
        node = { path: [...parent, key], kinds: new Set() };
        level.set(key, node);
        this.keys.push(node);
      }
      const kind = kindOf(value);
      if (kind === undefined) continue;
      node.kinds.add(kind);
      if (kind === 'object' && node.path.length < MAX_DEPTH) {
        node.children ??= new Map();
        this.#walk(value as Record<string, unknown>, node.children, node.path);
      }
    }
  }
}

/** The key paths of a batch of payload objects (see {@link KeyDiscovery}). */
export function discoverObjectKeys(objects: Iterable<Record<string, unknown>>): SeenKey[] {
  const discovery = new KeyDiscovery();
  for (const object of objects) discovery.add(object);
  return discovery.keys;
}

/**
 * Several discoveries as one: each path once, with every kind any of them saw (parents still
 * before their children).
 */
export function mergeKeys(lists: Iterable<readonly SeenKey[]>): SeenKey[] {
  const byPath = new Map<string, SeenKey>();
  for (const list of lists) {
    for (const key of list) {
      const id = key.path.join('\u0000');
      const known = byPath.get(id);
      if (!known) byPath.set(id, { path: key.path, kinds: new Set(key.kinds) });
      else for (const kind of key.kinds) known.kinds.add(kind);
    }
  }
  return [...byPath.values()];
}
