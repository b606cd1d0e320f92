/**
 * Request bodies and NDJSON lines are UTF-8 and must be well-formed: a decoder that replaced
 * ill-formed bytes (overlong forms, encoded surrogates, truncated sequences) with U+FFFD would
 * store text the client never sent. Free of zod and DuckDB, so the loader's parse workers run it.
 */

/** Where in a JSON document something was found: object keys and array indexes. */
export type JsonPath = Array<string | number>;

/** The text of well-formed UTF-8 bytes (a leading BOM dropped unless `keepBom`), or null. */
export function strictUtf8(bytes: Uint8Array, keepBom = false): string | null {
  try {
    return (keepBom ? STRICT_KEEP_BOM : STRICT).decode(bytes);
  } catch {
    return null;
  }
}

const STRICT = new TextDecoder('utf-8', { fatal: true });
const STRICT_KEEP_BOM = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Why JSON bytes that are not well-formed UTF-8 are refused, naming where the first ill-formed
 * sequence sits: `jsons[3]: field "user.name" is not valid UTF-8`, `collection: is not valid
 * UTF-8`, or `<subject>: is not valid UTF-8` when it is not inside a string of valid JSON.
 */
export function describeBadUtf8(bytes: Uint8Array, subject?: string, keepBom = false): string {
  const found = locateBadUtf8(bytes, keepBom);
  if (!found) return subject ? `${subject}: is not valid UTF-8` : 'is not valid UTF-8';
  return describeAt(found.path, found.inKey, 'is not valid UTF-8');
}

/**
 * A sentence for a problem at `path` of a request body or line, its payload part named as a
 * field: `json` and `jsons[i]` are the payloads, what lies inside them their fields.
 */
export function describeAt(path: JsonPath, inKey: boolean, problem: string): string {
  let line = path;
  let field: JsonPath = [];
  if (path[0] === 'json') [line, field] = [path.slice(0, 1), path.slice(1)];
  else if (path[0] === 'jsons' && typeof path[1] === 'number') {
    [line, field] = [path.slice(0, 2), path.slice(2)];
  }
  return `${formatJsonPath(line) || 'request body'}: ${describeField(field, inKey, problem)}`;
}

/** A problem in a payload: `field "a.b" <problem>`, `a key in field "a" <problem>`. */
export function describeField(field: JsonPath, inKey: boolean, problem: string): string {
  const name = `field "${formatJsonPath(field)}"`;
  if (inKey) return field.length > 0 ? `a key in ${name} ${problem}` : `a key ${problem}`;
  return field.length > 0 ? `${name} ${problem}` : problem;
}

/** `a.b[2].c`, keys clipped so that an error never echoes kilobytes back. */
export function formatJsonPath(path: JsonPath): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else {
      const name = key.length > 40 ? `${key.slice(0, 37)}...` : key;
      out += out ? `.${name}` : name;
    }
  }
  return out;
}

/** A rare string standing where the first ill-formed sequence was, to find it once parsed. */
const MARKER = '\uFDD0\uFDEF\uFDD0';

/**
 * The path of the string holding the first ill-formed sequence: the well-formed text before it,
 * the marker, then the rest decoded leniently, parsed as JSON and searched for the marker
 * (inside strings that themselves hold JSON too, as `jsons` texts do).
 */
function locateBadUtf8(
  bytes: Uint8Array,
  keepBom: boolean,
): { path: JsonPath; inKey: boolean } | undefined {
  const at = firstBadSequence(bytes);
  const before = strictUtf8(bytes.subarray(0, at), keepBom);
  if (before === null || before.includes(MARKER)) return undefined;
  const lenient = new TextDecoder('utf-8', { ignoreBOM: true });
  let parsed: unknown;
  try {
    parsed = JSON.parse(before + MARKER + lenient.decode(bytes.subarray(at)));
    return findMarker(parsed, []);
  } catch {
    // Not JSON, or nested too deeply to search: the caller names the whole body.
    return undefined;
  }
}

/**
 * Where the first ill-formed sequence starts: the longest prefix a streaming strict decoder
 * takes (a sequence cut at the prefix's end is still pending), then back to that sequence's
 * first byte.
 */
function firstBadSequence(bytes: Uint8Array): number {
  const takes = (n: number) => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, n), { stream: true });
      return true;
    } catch {
      return false;
    }
  };
  let good = 0;
  let bad = bytes.length + 1;
  while (bad - good > 1) {
    const mid = (good + bad) >>> 1;
    if (takes(mid)) good = mid;
    else bad = mid;
  }
  // A sequence still pending at the end of the taken bytes is the one that failed (or was cut).
  for (let start = good; start > good - 4 && start > 0; start--) {
    if (strictUtf8(bytes.subarray(0, start)) !== null) return start;
  }
  return 0;
}

function findMarker(
  value: unknown,
  path: JsonPath,
): { path: JsonPath; inKey: boolean } | undefined {
  if (typeof value === 'string') {
    if (!value.includes(MARKER)) return undefined;
    try {
      const inner = findMarker(JSON.parse(value), path);
      if (inner) return inner;
    } catch {
      // A plain string, not JSON text.
    }
    return { path, inKey: false };
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findMarker(value[i], [...path, i]);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    if (key.includes(MARKER)) return { path, inKey: true };
    const found = findMarker(item, [...path, key]);
    if (found) return found;
  }
  return undefined;
}
