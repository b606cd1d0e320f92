import type { Envelope } from '@analytics-chart/protocol';
import { EngineError } from '../../engine-error.ts';

/**
 * The parts of the number rule (docs/query-semantics.md) that both drivers apply in JavaScript
 * beside `exact-sum.ts`: an answer holding a number JSON cannot carry is refused rather than
 * shown as `null` or 0.
 */

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
