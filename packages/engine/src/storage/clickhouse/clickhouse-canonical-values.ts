/**
 * The values at a few key paths of a payload in compact form (the text `JSON.stringify` writes)
 * read from the text in one pass, without `JSON.parse`: rendering an event's form columns reads
 * a dozen values of a text parsed already once, at ingest, and parsing it again into objects
 * cost more than the rest of its row.
 */

/** The paths to read, as a tree of keys: where a path ends, the index of its value. */
export interface PathNode {
  /** The index in the values of the path ending here, or -1. */
  index: number;
  below: Map<string, PathNode> | undefined;
}

/** Stands for an object value: only its kind matters to its forms. */
export const OBJECT_VALUE: Readonly<Record<string, never>> = Object.freeze({});

/** The tree of `paths`, the ith path's value going to index i. */
export function pathTree(paths: readonly (readonly string[])[]): Map<string, PathNode> {
  const top = new Map<string, PathNode>();
  paths.forEach((path, index) => {
    let level = top;
    path.forEach((key, depth) => {
      let node = level.get(key);
      if (!node) {
        node = { index: -1, below: undefined };
        level.set(key, node);
      }
      if (depth === path.length - 1) node.index = index;
      else level = node.below ??= new Map();
    });
  });
  return top;
}

/**
 * Writes into `values` the value at each path of `tree` in `text`, as `JSON.parse` and a walk
 * through object members would find it: a string, number, boolean or null, {@link OBJECT_VALUE}
 * for an object, and undefined for a missing key or a path through something not an object.
 * `text` must be JSON of an object as `JSON.stringify` writes it (compact, each key once)
 * holding no backslash, so that every string ends at the next quote. Answers false, leaving the
 * text to `JSON.parse`, when a path's value is an array.
 */
export function valuesAt(text: string, tree: Map<string, PathNode>, values: unknown[]): boolean {
  values.fill(undefined);
  unread = values.length;
  return readObject(text, 0, tree, values) >= 0;
}

/**
 * The paths of the text being read whose values are still to be found: compact text holds each
 * key once, so the reading stops once none is left.
 */
let unread = 0;

const QUOTE = 0x22;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** Reads the object at `at` (its `{`); returns where it ends, or -1 for an array to parse. */
function readObject(
  text: string,
  at: number,
  level: Map<string, PathNode>,
  values: unknown[],
): number {
  let i = at + 1;
  if (text.charCodeAt(i) === CLOSE_OBJECT) return i + 1;
  for (;;) {
    const keyEnd = text.indexOf('"', i + 1);
    const node = level.get(text.slice(i + 1, keyEnd));
    // Past the key's closing quote and the colon.
    i = keyEnd + 2;
    const c = text.charCodeAt(i);
    const wanted = node !== undefined && node.index >= 0;
    if (c === QUOTE) {
      const end = text.indexOf('"', i + 1);
      if (wanted) values[node.index] = text.slice(i + 1, end);
      i = end + 1;
    } else if (c === OPEN_OBJECT) {
      if (node?.below) {
        i = readObject(text, i, node.below, values);
        if (i < 0) return -1;
      } else i = skipNested(text, i);
      if (wanted) values[node.index] = OBJECT_VALUE;
    } else if (c === OPEN_ARRAY) {
      if (wanted) return -1;
      i = skipNested(text, i);
    } else {
      let end = i + 1;
      for (;;) {
        const d = text.charCodeAt(end);
        if (d === COMMA || d === CLOSE_OBJECT) break;
        end++;
      }
      if (wanted) values[node.index] = literal(text.slice(i, end));
      i = end;
    }
    if (wanted) unread--;
    if (text.charCodeAt(i) !== COMMA) return i + 1;
    // Nothing left to find: each object being read stops at its next member, so no position is
    // read again (a wanted object's own value is found only after its members).
    if (unread === 0) return i;
    i++;
  }
}

/** The value of a number, `true`, `false` or `null` token. */
function literal(token: string): number | boolean | null {
  if (token === 'true') return true;
  if (token === 'false') return false;
  if (token === 'null') return null;
  return Number(token);
}

/** Where the object or array at `at` ends. */
function skipNested(text: string, at: number): number {
  let depth = 0;
  let i = at;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = text.indexOf('"', i + 1);
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++;
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
}
