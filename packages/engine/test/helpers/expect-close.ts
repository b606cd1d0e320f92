import { expect } from 'vitest';

/**
 * Deep equality where numbers may differ by floating-point rounding (sums in another order):
 * relative 1e-9. Everything else, including key sets and row order, must match exactly.
 */
export function expectClose(actual: unknown, expected: unknown, path = '$'): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    const tolerance = 1e-9 * Math.max(1, Math.abs(expected));
    if (Math.abs(actual - expected) > tolerance) {
      expect.fail(`${path}: expected ${expected}, got ${actual}`);
    }
    return;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual))
      expect.fail(`${path}: expected an array, got ${JSON.stringify(actual)}`);
    if (actual.length !== expected.length) {
      expect.fail(
        `${path}: expected ${expected.length} items, got ${actual.length}: ${JSON.stringify(actual).slice(0, 400)} vs ${JSON.stringify(expected).slice(0, 400)}`,
      );
    }
    for (const [i, item] of expected.entries()) expectClose(actual[i], item, `${path}[${i}]`);
    return;
  }
  if (typeof expected === 'object' && expected !== null) {
    if (typeof actual !== 'object' || actual === null)
      expect.fail(`${path}: expected an object, got ${JSON.stringify(actual)}`);
    const a = Object.keys(actual as object).sort();
    const e = Object.keys(expected).sort();
    if (JSON.stringify(a) !== JSON.stringify(e))
      expect.fail(`${path}: keys ${JSON.stringify(a)} != ${JSON.stringify(e)}`);
    for (const key of e)
      expectClose(
        (actual as Record<string, unknown>)[key],
        (expected as Record<string, unknown>)[key],
        `${path}.${key}`,
      );
    return;
  }
  if (actual !== expected)
    expect.fail(`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}
