import type { ChartPayload } from '@analytics-chart/protocol/chart-payload';

/**
 * The legend name of a comparison series. The edge names both windows after the value key
 * (`Count`), so an equal name gets a suffix saying which population it is.
 */
export function compareSeriesName(name: string, payload: ChartPayload): string {
  if (!payload.series.some((s) => s.name === name)) return name;
  return payload.graph === 'Compare Line' ? `${name} (comparison)` : `${name} (previous period)`;
}
