/**
 * `@analytics-chart/element`: importing this module registers `<analytics-chart>`. The class and
 * the pure translation functions are exported for subclassing, server-side checks and tests.
 */

export { type DataTable, toDataTable } from './accessibility/to-data-table.ts';
export type { ChartMode, ChartThemeName } from './analytics-chart.component.ts';
export { AnalyticsChart, TAG_NAME } from './analytics-chart.ts';
export { type ChartFormatters, createFormatters } from './chart/chart-formatters.ts';
export { type AnalyticsChartConfig, toChartConfig } from './chart/to-chart-config.ts';
export type { ChartDataStatus } from './data/chart-data-controller.ts';
export { type ChartErrorCode, type ChartLoadError, ERROR_TEXT } from './data/chart-load-error.ts';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './data/retry-delay.ts';
export {
  CHART_EVENTS,
  type ChartErrorDetail,
  type ChartErrorEvent,
  type ChartLoadDetail,
  type ChartLoadEvent,
  type ChartTokenExpiredDetail,
  type ChartTokenExpiredEvent,
} from './events.ts';
export { toCsv } from './export/to-csv.ts';
