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
 * The SQL funnel, one definition for every tenant: `{tenant:String}` is a typed SQL parameter
 * filled from the session, which the engine binds as a prepared-statement parameter (and the
 * HTTP backend writes as an escaped literal), so the SQL text never changes with the viewer.
 */
const signupFunnel: QueryDefinition = {
  title: 'Users reaching each stage, last 30 days (SQL)',
  query: {
    graph_type: 'Funnel',
    IANA_time_zone: DASHBOARD_TIME_ZONE,
    // One scan of the tenant's last 30 whole days (day-aligned, so the answer holds all day);
    // each stage counts the users who also reached every stage before it.
    sql_query: `WITH tenant_events AS (
        SELECT JSONExtractString(json, 'event') AS event,
               JSONExtractString(json, 'user_id') AS user_id
        FROM all_events
        WHERE timestamp > toUnixTimestamp(toStartOfDay(now())) - 30 * 86400
          AND JSONExtractString(json, 'tenant') = {tenant:String}
      ), reached AS MATERIALIZED (
        SELECT user_id,
               bool_or(event = 'page_view') AS visited,
               bool_or(event = 'login') AS logged_in,
               bool_or(event = 'feature_used') AS used_feature,
               bool_or(event = 'purchase') AS purchased
        FROM tenant_events GROUP BY user_id
      )
      SELECT stage, users FROM (
        SELECT 1 AS n, 'Visited' AS stage, count(*) FILTER (WHERE visited) AS users FROM reached
        UNION ALL SELECT 2, 'Logged in', count(*) FILTER (WHERE visited AND logged_in) FROM reached
        UNION ALL SELECT 3, 'Used a feature',
          count(*) FILTER (WHERE visited AND logged_in AND used_feature) FROM reached
        UNION ALL SELECT 4, 'Purchased',
          count(*) FILTER (WHERE visited AND logged_in AND used_feature AND purchased) FROM reached
      ) ORDER BY n`,
    label_column: 'stage',
    value_column: 'users',
  },
  params: tenantParam,
};

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
  'signup-funnel': signupFunnel,
};

/** One chart of the dashboard: the query it shows and how it is laid out. */
export interface DashboardChart {
  /** A registry name. */
  query: string;
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
  { query: 'signup-funnel', size: 'half', height: 300 },
  { query: 'top-countries', size: 'half', height: 360 },
  { query: 'recent-purchases', size: 'half', height: 360 },
];
