import { expect } from 'vitest';

/**
 * Deep equality, numbers included (the number rule makes every aggregate one exact value), with
 * one allowance: a Cumulative Line's percentiles, which the drivers compute with their own
 * window functions, may differ in their last bits (relative 1e-12) where the request, `body`,
 * is one. Key sets and row order must match exactly.
 */
export function expectClose(
  actual: unknown,
  expected: unknown,
  path = '$',
  body?: Record<string, unknown>,
): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    const tolerance = body && growingPercentile(body) ? 1e-12 * Math.abs(expected) : 0;
    if (!(Object.is(actual, expected) || Math.abs(actual - expected) <= tolerance)) {
      if (actual === 0 && expected === 0) return;
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
    for (const [i, item] of expected.entries()) expectClose(actual[i], item, `${path}[${i}]`, body);
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
        body,
      );
    return;
  }
  if (actual !== expected)
    expect.fail(`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

/** A Cumulative Line of a percentile: the one answer whose last bits are the driver's. */
export function growingPercentile(body: Record<string, unknown>): boolean {
  return (
    body.graph_type === 'Cumulative Line' &&
    typeof body.aggregation === 'string' &&
    /^(P\d+|Median)$/.test(body.aggregation)
  );
}
