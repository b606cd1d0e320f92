/**
 * Key paths: where a value sits inside an event payload, as the list of object keys that lead
 * to it. Filters and splits name them with dots (`device.os`); extraction uses JSON pointers
 * (`/device/os`), which can express any key, including keys that contain dots or slashes.
 */

/** The dotted field name that requests use for a path. */
export function fieldName(path: readonly string[]): string {
  return path.join('.');
}

/** RFC 6901 JSON pointer for a path, as DuckDB's JSON functions accept it. */
export function jsonPointer(path: readonly string[]): string {
  return path.map((key) => `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}
