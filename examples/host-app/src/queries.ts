/**
 * The registry alone (`@analytics-chart/example-host-app/queries`): pure data with no Node
 * imports, so the Workers example bundles the very same charts.
 */
export * from './dashboard-queries.ts';
export { EDGE_QUERIES } from './edge-queries.ts';
export { PUBLIC_QUERIES } from './public-queries.ts';
