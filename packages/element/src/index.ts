/**
 * `@analytics-chart/element`: importing this module registers `<analytics-chart>`. The class and
 * the pure translation functions are exported for subclassing, server-side checks and tests.
 */

export type { ChartMode, ChartThemeName } from './analytics-chart.component.ts';
export { AnalyticsChart, TAG_NAME } from './analytics-chart.ts';
export type { ChartDataStatus } from './chart-data-controller.ts';
export { type ChartFormatters, createFormatters } from './chart-formatters.ts';
export { type ChartErrorCode, type ChartLoadError, ERROR_TEXT } from './chart-load-error.ts';
export {
  CHART_EVENTS,
  type ChartErrorDetail,
  type ChartErrorEvent,
  type ChartLoadDetail,
  type ChartLoadEvent,
  type ChartTokenExpiredDetail,
  type ChartTokenExpiredEvent,
} from './events.ts';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-delay.ts';
export { type AnalyticsChartConfig, toChartConfig } from './to-chart-config.ts';
export { toCsv } from './to-csv.ts';
export { type DataTable, toDataTable } from './to-data-table.ts';
