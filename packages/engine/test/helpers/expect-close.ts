import { expect } from 'vitest';

/**
 * Deep equality, numbers included (the number rule makes every aggregate one exact value, on
 * every driver): numbers must be the same double (0 and -0 alike, as JSON writes both `0`). Key
 * sets and row order must match exactly.
 */
export function expectClose(actual: unknown, expected: unknown, path = '$'): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    if (!(Object.is(actual, expected) || (actual === 0 && expected === 0))) {
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
