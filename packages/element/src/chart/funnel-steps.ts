/** One funnel step with its conversion from the previous step and from the first. */
export interface FunnelStep {
  label: string;
  value: number | null;
  /** value / previous value; null for the first step or when the previous is 0 or missing. */
  fromPrevious: number | null;
  /** value / first value; 1 for the first step; null when the first is 0 or missing. */
  fromFirst: number | null;
}

/** Step conversions of a funnel, computed once for the axis labels, tooltips and the table. */
export function funnelSteps(labels: string[], values: (number | null)[]): FunnelStep[] {
  const first = values[0] ?? null;
  return labels.map((label, i) => {
    const value = values[i] ?? null;
    const previous = i > 0 ? (values[i - 1] ?? null) : null;
    return {
      label,
      value,
      fromPrevious: ratio(value, previous),
      fromFirst: i === 0 && value !== null ? 1 : ratio(value, first),
    };
  });
}

function ratio(value: number | null, base: number | null): number | null {
  return value === null || base === null || base === 0 ? null : value / base;
}
