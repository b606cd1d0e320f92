/**
 * The query registry of the demo dashboard: what each chart shows, which time ranges a viewer
 * may switch between, and which event fields may leave the edge. Every query is scoped to the
 * signed-in user's tenant by a `{"$param": "tenant"}` placeholder filled from the session, so a
 * viewer can never widen it. Pure data, shared by the Node host app and the Workers example.
 */
import type { QueryDefinition, RangeOption } from '@analytics-chart/edge';

/** The tenants of the demo data (the `tenant` field of every demo event). */
export const TENANTS = ['acme', 'globex'] as const;
/** A tenant of the demo. */
export type Tenant = (typeof TENANTS)[number];

/** The zone the dashboard's labels are in. */
export const DASHBOARD_TIME_ZONE = 'UTC';

/** The viewer options of the time-series charts: the picker shows these, in this order. */
export const DASHBOARD_RANGES: Readonly<Record<string, RangeOption>> = {
  '24h': { label: 'Last 24 hours', start: '24 hours ago', end: 'now', granularity: 'Hour' },
  '7d': { label: 'Last 7 days', start: '7 days ago', end: 'now', granularity: 'Day' },
  '30d': { label: 'Last 30 days', start: '30 days ago', end: 'now', granularity: 'Day' },
  '90d': { label: 'Last 90 days', start: '90 days ago', end: 'now', granularity: 'Week' },
};

/** The range a dashboard opens with. */
export const DEFAULT_DASHBOARD_RANGE = '30d';

const tenantOnly = [['tenant', '=', { $param: 'tenant' }]];
const tenantParam = { tenant: { from: 'session' } } as const;

function where(...conditions: unknown[][]): unknown[][] {
  return [...tenantOnly, ...conditions];
}

/** A time series over the dashboard's ranges, opening on the default one. */
function overRanges(definition: QueryDefinition): QueryDefinition {
  return {
    ...definition,
    query: {
      IANA_time_zone: DASHBOARD_TIME_ZONE,
      start: '30 days ago',
      end: 'now',
      ...definition.query,
    },
    params: tenantParam,
    ranges: DASHBOARD_RANGES,
    defaultRange: DEFAULT_DASHBOARD_RANGE,
  };
}

/** A headline number over the last seven days against the seven before. */
function weekOverWeek(title: string, query: Record<string, unknown>): QueryDefinition {
  return {
    title,
    query: {
      graph_type: 'Single Value',
      IANA_time_zone: DASHBOARD_TIME_ZONE,
      start: '7 days ago',
      end: 'now',
      compare: '1 week ago',
      ...query,
    },
    params: tenantParam,
  };
}

/**
 * SQL mode has no placeholders inside SQL text (a parameter is always one whole JSON value,
 * never spliced into SQL), so a tenant-scoped SQL chart is one definition per tenant, written
 * from this fixed list, never from input. The session parameter still locks each id to its
 * tenant: a `globex` session is refused an id minted for `acme`.
 */
function signupFunnel(tenant: Tenant): QueryDefinition {
  const step = (n: number, label: string, event: string) =>
    `SELECT ${n} AS n, '${label}' AS stage, count(DISTINCT JSONExtractString(json, 'user_id')) AS users
     FROM all_events
     WHERE JSONExtractString(json, 'tenant') = '${tenant}'
       AND JSONExtractString(json, 'event') = '${event}'
       AND timestamp > toUnixTimestamp(now()) - 30 * 86400`;
  return {
    title: 'Users by stage, last 30 days (SQL)',
    query: {
      graph_type: 'Funnel',
      IANA_time_zone: DASHBOARD_TIME_ZONE,
      sql_query: `SELECT stage, users FROM (
        ${step(1, 'Visited', 'page_view')}
        UNION ALL ${step(2, 'Logged in', 'login')}
        UNION ALL ${step(3, 'Used a feature', 'feature_used')}
        UNION ALL ${step(4, 'Purchased', 'purchase')}
      ) ORDER BY n`,
      label_column: 'stage',
      value_column: 'users',
    },
    params: tenantParam,
  };
}

/** The registry name of a tenant's SQL funnel. */
export function funnelQueryName(tenant: Tenant): string {
  return `signup-funnel.${tenant}`;
}

/** Every query the dashboard may run, by name. */
export const DASHBOARD_QUERIES: Readonly<Record<string, QueryDefinition>> = {
  'kpi-events': weekOverWeek('Events, last 7 days', { filters: tenantOnly }),
  'kpi-revenue': weekOverWeek('Revenue (USD), last 7 days', {
    aggregation: 'Sum',
    metric: 'price',
    filters: where(['event', '=', 'purchase']),
  }),
  'kpi-signups': weekOverWeek('Signups, last 7 days', {
    filters: where(['event', '=', 'signup']),
  }),
  'events-by-plan': overRanges({
    title: 'Events by plan',
    query: { graph_type: 'Multi Line', split: 'plan', filters: tenantOnly },
  }),
  'views-by-path': overRanges({
    title: 'Page views by path',
    query: {
      graph_type: 'Stacked Line',
      split: 'path',
      filters: where(['event', '=', 'page_view']),
    },
  }),
  'error-rate': overRanges({
    title: 'Errors per event',
    query: {
      graph_type: 'Ratio Line',
      filters: tenantOnly,
      numerator_filters: [['event', '=', 'error']],
      denominator_filters: [],
    },
  }),
  'revenue-cumulative': overRanges({
    title: 'Revenue (USD), cumulative',
    query: {
      graph_type: 'Cumulative Line',
      aggregation: 'Sum',
      metric: 'price',
      filters: where(['event', '=', 'purchase']),
    },
  }),
  'logins-enterprise': overRanges({
    title: 'Logins: all plans vs enterprise',
    query: {
      graph_type: 'Compare Line',
      filters: where(['event', '=', 'login']),
      compare_filters: [['plan', '=', 'enterprise']],
    },
    seriesNames: { result: 'All plans', compare: 'Enterprise' },
  }),
  'top-countries': overRanges({
    title: 'Events by country',
    query: { graph_type: 'Table', split: 'country', filters: tenantOnly },
  }),
  devices: overRanges({
    title: 'Events by operating system',
    query: { graph_type: 'Pie Chart', split: 'device.os', filters: tenantOnly },
  }),
  features: overRanges({
    title: 'Features used',
    query: {
      graph_type: 'Bar Chart',
      split: 'feature',
      filters: where(['event', '=', 'feature_used']),
    },
  }),
  'recent-purchases': overRanges({
    title: 'Latest purchases',
    query: { graph_type: 'Samples', filters: where(['event', '=', 'purchase']) },
    // The allowlist: user ids and everything else in the event stay on the server.
    fields: ['plan', 'country', 'price', 'device.browser'],
  }),
  ...Object.fromEntries(TENANTS.map((tenant) => [funnelQueryName(tenant), signupFunnel(tenant)])),
};

/** One chart of the dashboard: the query it shows and how it is laid out. */
export interface DashboardChart {
  /** A registry name, or a function of the tenant for per-tenant definitions. */
  query: string | ((tenant: Tenant) => string);
  /** `wide` charts span both grid columns. */
  size: 'kpi' | 'half' | 'wide';
  height: number;
}

/** The dashboard, top to bottom. */
export const DASHBOARD_LAYOUT: readonly DashboardChart[] = [
  { query: 'kpi-events', size: 'kpi', height: 140 },
  { query: 'kpi-revenue', size: 'kpi', height: 140 },
  { query: 'kpi-signups', size: 'kpi', height: 140 },
  { query: 'events-by-plan', size: 'half', height: 300 },
  { query: 'views-by-path', size: 'half', height: 300 },
  { query: 'revenue-cumulative', size: 'half', height: 300 },
  { query: 'logins-enterprise', size: 'half', height: 300 },
  { query: 'error-rate', size: 'half', height: 300 },
  { query: 'features', size: 'half', height: 300 },
  { query: 'devices', size: 'half', height: 300 },
  { query: funnelQueryName, size: 'half', height: 300 },
  { query: 'top-countries', size: 'half', height: 360 },
  { query: 'recent-purchases', size: 'half', height: 360 },
];
