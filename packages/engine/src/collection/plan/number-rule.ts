import type { Envelope } from '@analytics-chart/protocol';
import { EngineError } from '../../engine-error.ts';

/**
 * The parts of the number rule (docs/query-semantics.md) that both drivers apply in JavaScript:
 * a mean that does not overflow, and an answer holding a number JSON cannot carry refused
 * rather than shown as `null` or 0.
 */

/** 2^64: Avg scales values down by it where their plain sum would overflow (exactly). */
export const MEAN_SCALE = 2 ** 64;

/**
 * The mean of `n` values from their plain sum and the sum of each value divided by
 * {@link MEAN_SCALE}: the plain quotient where the sum is finite, else the scaled one scaled
 * back (a mean never exceeds its values, so it is finite). Null for no values.
 */
export function meanOf(sum: number, scaledSum: number, n: number): number | null {
  if (n === 0) return null;
  const plain = sum / n;
  return Number.isFinite(plain) ? plain : (scaledSum / n) * MEAN_SCALE;
}

/** What a query answers when one of its values is beyond the doubles JSON carries. */
export const BEYOND_DOUBLES =
  'A value of this answer is beyond the largest number a JSON answer can hold (about ±1.8e308); filter out the largest values or use Avg';

/**
 * Throws the 400 of {@link BEYOND_DOUBLES} where a value of the answer is infinite or not a
 * number (a Sum or a percentile's interpolation past ±1.8e308): JSON would write it as `null`,
 * which reads as "no values".
 */
export function refuseNonFinite(envelope: Envelope): void {
  const check = (value: unknown) => {
    if (typeof value === 'number' && !Number.isFinite(value)) {
      throw new EngineError(400, BEYOND_DOUBLES);
    }
  };
  for (const rows of [envelope.result, envelope.compare_result]) {
    for (const row of rows ?? []) {
      if (typeof row === 'object' && row !== null) for (const v of Object.values(row)) check(v);
    }
  }
  check(envelope.metadata.combined);
  check(envelope.metadata.compare_combined);
}
