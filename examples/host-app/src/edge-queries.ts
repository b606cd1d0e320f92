import type { QueryDefinition } from '@analytics-chart/edge';
import { DASHBOARD_QUERIES } from './dashboard-queries.ts';
import { PUBLIC_QUERIES } from './public-queries.ts';

/** The edge's whole registry: the dashboard's session-bound queries and the public ones. */
export const EDGE_QUERIES: Readonly<Record<string, QueryDefinition>> = {
  ...DASHBOARD_QUERIES,
  ...PUBLIC_QUERIES,
};
