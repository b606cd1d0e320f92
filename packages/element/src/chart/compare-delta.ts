/** A Single Value's change against its comparison window. */
export interface CompareDelta {
  direction: 'up' | 'down' | 'flat';
  /** Relative change (0.125 = +12.5 %); null when the comparison is 0 or missing. */
  relative: number | null;
  absolute: number;
}

/** The change from `compareValue` to `value`, or null when either is missing. */
export function compareDelta(
  value: number | null | undefined,
  compareValue: number | null | undefined,
): CompareDelta | null {
  if (value === null || value === undefined || compareValue === null || compareValue === undefined)
    return null;
  const absolute = value - compareValue;
  return {
    direction: absolute > 0 ? 'up' : absolute < 0 ? 'down' : 'flat',
    relative: compareValue === 0 ? null : absolute / Math.abs(compareValue),
    absolute,
  };
}
