/**
 * Key paths: where a value sits inside an event payload, as the list of object keys that lead
 * to it. Filters and splits name them with dots (`device.os`); extraction uses JSON pointers
 * (`/device/os`), which can express any key, including keys that contain dots or slashes. Both
 * drivers and ingest share them.
 */

/** The dotted field name that requests use for a path. */
export function fieldName(path: readonly string[]): string {
  return path.join('.');
}

/**
 * The order in which the paths that spell one field are tried for an event: fewer keys first,
 * then the one whose keys are longer from the left (`a.b` › `c` before `a` › `b.c`).
 */
export function comparePaths(a: readonly string[], b: readonly string[]): number {
  if (a.length !== b.length) return a.length - b.length;
  for (let i = 0; i < a.length; i++) {
    const d = (b[i] as string).length - (a[i] as string).length;
    if (d !== 0) return d;
  }
  return 0;
}

/** RFC 6901 JSON pointer for a path, as DuckDB's JSON functions accept it. */
export function jsonPointer(path: readonly string[]): string {
  return path.map((key) => `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}
