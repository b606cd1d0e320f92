/**
 * Key discovery: which key paths a batch of payloads holds and what kinds of value they hold
 * there, which decides the typed columns. Free of DuckDB, so the loader's parse workers run it.
 */

import { MAX_DEPTH, type SeenKey, type ValueKind, WIDE_EVENT_KEYS } from '../storage/seen-key.ts';

export {
  MAX_DEPTH,
  MAX_EVENT_KEYS,
  type SeenKey,
  type ValueKind,
  WIDE_EVENT_KEYS,
} from '../storage/seen-key.ts';

/**
 * The kinds of value as bits (null is 0), as the loader's line scanner reports them too. While
 * walking, a key's kinds are bits: setting a bit costs far less than adding to a Set, and
 * discovery runs for every key of every event.
 */
export const KIND = {
  STRING: 1,
  NUMERIC_STRING: 2,
  NUMBER: 4,
  BOOLEAN: 8,
  ARRAY: 16,
  OBJECT: 32,
} as const;
const { STRING, NUMERIC_STRING, NUMBER, BOOLEAN, ARRAY, OBJECT } = KIND;
const KINDS: Array<[number, ValueKind]> = [
  [STRING, 'string'],
  [NUMERIC_STRING, 'numeric string'],
  [NUMBER, 'number'],
  [BOOLEAN, 'boolean'],
  [ARRAY, 'array'],
  [OBJECT, 'object'],
];

/** A key path while walking: its kinds as bits, and the keys found below it. */
interface KeyNode {
  path: string[];
  kinds: number;
  children?: Map<string, KeyNode>;
  /** Whether an event of at most {@link WIDE_EVENT_KEYS} key paths held it. */
  narrow: boolean;
}

/** Strings that may read as a number start with a digit, sign, dot or white space. */
const MAYBE_NUMERIC = /^[\s\d+\-.]/;

/** `MAYBE_NUMERIC` for first characters below 128, looked up instead of matched. */
const ASCII_MAYBE_NUMERIC: boolean[] = [];
for (let c = 0; c < 128; c++) ASCII_MAYBE_NUMERIC[c] = MAYBE_NUMERIC.test(String.fromCharCode(c));

/**
 * The kind of the string whose first character is at `at` in `text` (past its end, or at its
 * closing quote, when it is empty: neither reads as numeric).
 */
export function stringKind(text: string, at: number): number {
  const first = text.charCodeAt(at);
  const numeric = first < 128 ? ASCII_MAYBE_NUMERIC[first] : MAYBE_NUMERIC.test(text.charAt(at));
  return numeric ? NUMERIC_STRING : STRING;
}

function kindOf(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return stringKind(value, 0);
    case 'number':
      return NUMBER;
    case 'boolean':
      return BOOLEAN;
    case 'object':
      if (value === null) return 0;
      return Array.isArray(value) ? ARRAY : OBJECT;
    default:
      return 0;
  }
}

/**
 * Finds every key path in payload objects and the kinds of value each one holds, one object at
 * a time (so a parser can hand each object over and drop it). It reads every event, not a
 * sample, so a key without a column is a key no event has.
 */
export class KeyDiscovery {
  readonly #top = new Map<string, KeyNode>();
  readonly #nodes: KeyNode[] = [];

  /** The key paths found so far, parents before their children. */
  get keys(): SeenKey[] {
    return this.#nodes.map(({ path, kinds, narrow }) => ({
      path,
      kinds: new Set(KINDS.filter(([bit]) => kinds & bit).map(([, kind]) => kind)),
      ...(narrow ? {} : { wideOnly: true }),
    }));
  }

  /** Walks one payload object. */
  add(object: Record<string, unknown>): void {
    const touched = this.#touched;
    touched.length = 0;
    this.#walk(object, this.#top, []);
    if (touched.length <= WIDE_EVENT_KEYS) for (const node of touched) node.narrow = true;
  }

  /** The nodes of the payload {@link add} walks, to mark them narrow when it is. */
  readonly #touched: KeyNode[] = [];

  /**
   * Takes the keys of one payload as a line scanner found them, in document order: key `i` has
   * the parent key `parents[i]` (-1 at the top), the name `names[i]` and the kind bits
   * `kinds[i]`, and objects past {@link MAX_DEPTH} are not looked into. The same keys in the
   * same order as {@link add} of the parsed object.
   */
  addScanned(scanned: {
    count: number;
    parents: readonly number[];
    names: readonly string[];
    kinds: readonly number[];
  }): void {
    const nodes = this.#scannedNodes;
    for (let i = 0; i < scanned.count; i++) {
      const parent = scanned.parents[i] as number;
      const name = scanned.names[i] as string;
      const above = parent < 0 ? undefined : (nodes[parent] as KeyNode);
      if (above) above.children ??= new Map();
      const level = above?.children ?? this.#top;
      let node = level.get(name);
      if (!node) {
        node = { path: above ? [...above.path, name] : [name], kinds: 0, narrow: false };
        level.set(name, node);
        this.#nodes.push(node);
      }
      node.kinds |= scanned.kinds[i] as number;
      nodes[i] = node;
    }
    if (scanned.count <= WIDE_EVENT_KEYS) {
      for (let i = 0; i < scanned.count; i++) (nodes[i] as KeyNode).narrow = true;
    }
  }

  /** The node of each key of the payload being taken, reused from one payload to the next. */
  readonly #scannedNodes: KeyNode[] = [];

  #walk(object: Record<string, unknown>, level: Map<string, KeyNode>, parent: string[]): void {
    for (const key in object) {
      const value = object[key];
      let node = level.get(key);
      if (!node) {
        node = { path: [...parent, key], kinds: 0, narrow: false };
        level.set(key, node);
        this.#nodes.push(node);
      }
      this.#touched.push(node);
      const kind = kindOf(value);
      node.kinds |= kind;
      if (kind === OBJECT && node.path.length < MAX_DEPTH) {
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
 * before their children), wide-only when every one of them saw it only in wide events.
 */
export function mergeKeys(lists: Iterable<readonly SeenKey[]>): SeenKey[] {
  const byPath = new Map<string, SeenKey>();
  for (const list of lists) {
    for (const key of list) {
      const id = key.path.join('\u0000');
      const known = byPath.get(id);
      if (!known) {
        byPath.set(id, {
          path: key.path,
          kinds: new Set(key.kinds),
          ...(key.wideOnly ? { wideOnly: true } : {}),
        });
      } else {
        for (const kind of key.kinds) known.kinds.add(kind);
        if (!key.wideOnly) delete known.wideOnly;
      }
    }
  }
  return [...byPath.values()];
}
