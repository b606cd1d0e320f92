/**
 * Sets `key` on a plain object as an own, enumerable data property, whatever the key. Plain
 * assignment of `__proto__` changes the object's prototype (or, for a number or null, nothing at
 * all), so a split value, a column name, a struct field or a map key that is literally
 * `__proto__` would be missing from the answer; JSON has no such key to avoid.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else target[key] = value;
}

/**
 * Puts one series' value into a wide time-series row `{timestamp, "<series>": value, …}`, in
 * collection mode and SQL mode alike. A series named `timestamp` cannot be told from the row's
 * label in that shape: the label wins, and the series has no values in the rows (it is still
 * listed in `metadata.series`).
 */
export function setSeriesValue(row: Record<string, unknown>, series: string, value: unknown): void {
  if (series !== 'timestamp') setOwn(row, series, value);
}
