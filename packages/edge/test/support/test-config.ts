/**
 * The edge configuration both runtimes run in the shared suite: the Node harness builds it in
 * the test process, the workerd harness bundles this module into the worker. Secrets come from
 * the environment / bindings exactly as in production.
 */

import type { EdgeEnv } from '../../src/config/config-from-env.ts';
import type { EdgeConfig } from '../../src/config/edge-config.ts';
import type { QueryDefinition } from '../../src/registry/query-definition.ts';
import { jwtSession } from '../../src/session/jwt-session.ts';

/** The registry of the suite. */
export const TEST_QUERIES: Record<string, QueryDefinition> = {
  'tenant-daily': {
    title: 'Events per day',
    query: {
      graph_type: 'Single Line',
      IANA_time_zone: 'UTC',
      start: '7 days ago',
      end: 'now',
      granularity: 'Day',
      filters: [['tenant', '=', { $param: 'tenant' }]],
    },
    params: { tenant: { from: 'session' } },
    ranges: {
      '7d': { label: 'Last 7 days', start: '7 days ago', end: 'now', granularity: 'Day' },
      '30d': { label: 'Last 30 days', start: '30 days ago', end: 'now', granularity: 'Day' },
    },
  },
  'public-total': {
    title: 'Events (30 days)',
    query: {
      graph_type: 'Single Value',
      IANA_time_zone: 'UTC',
      start: '30 days ago',
      end: 'now',
      filters: [['tenant', '=', { $param: 'tenant' }]],
    },
    params: { tenant: { from: 'signer', pattern: '[a-z0-9-]{1,40}' } },
  },
  'public-daily': {
    title: 'Daily events',
    query: {
      graph_type: 'Single Line',
      IANA_time_zone: 'UTC',
      start: '7 days ago',
      end: 'now',
      granularity: 'Day',
      filters: [['tenant', '=', { $param: 'tenant' }]],
    },
    params: { tenant: { from: 'signer', pattern: '[a-z0-9-]{1,40}' } },
    ranges: {
      '7d': { label: 'Last 7 days', start: '7 days ago', end: 'now', granularity: 'Day' },
      '30d': { label: 'Last 30 days', start: '30 days ago', end: 'now', granularity: 'Day' },
    },
  },
  'short-cache': {
    query: {
      graph_type: 'Single Value',
      IANA_time_zone: 'UTC',
      start: '30 days ago',
      end: 'now',
      filters: [['tenant', '=', { $param: 'tenant' }]],
    },
    params: { tenant: { from: 'signer' } },
    cacheSeconds: 1,
  },
  'recent-events': {
    title: 'Recent events',
    query: {
      graph_type: 'Samples',
      IANA_time_zone: 'UTC',
      start: '30 days ago',
      end: 'now',
      filters: [['tenant', '=', { $param: 'tenant' }]],
    },
    params: { tenant: { from: 'session' } },
    fields: ['event', 'user.plan'],
  },
  'tenant-sql': {
    title: 'Events by kind (SQL)',
    query: {
      graph_type: 'Bar Chart',
      IANA_time_zone: 'UTC',
      sql_query: `SELECT JSONExtractString(json, 'event') AS kind, count(*) AS n
        FROM all_events WHERE JSONExtractString(json, 'tenant') = {tenant:String}
        GROUP BY kind ORDER BY kind`,
      label_column: 'kind',
      value_column: 'n',
    },
    params: { tenant: { from: 'session' } },
  },
  'admin-total': {
    title: 'Events (admins only)',
    query: {
      graph_type: 'Single Value',
      IANA_time_zone: 'UTC',
      start: '30 days ago',
      end: 'now',
      filters: [['tenant', '=', { $param: 'tenant' }]],
    },
    params: { tenant: { from: 'session' } },
    signers: { claims: { role: ['admin'] } },
  },
};

/** Origins the suite's pages live on. */
export const APP_ORIGIN = 'https://app.example.com';

/**
 * The edge's public URL in the suite's environment (`EDGE_PUBLIC_URL`): not where the test
 * reaches it, so an answer built from the request's Host would show.
 */
export const PUBLIC_URL = 'https://charts.example.com/analytics';

/** Per-id and per-IP buckets small enough to test, never refilling within a test run. */
export const TEST_LIMITS = {
  perId: { perSecond: 0.001, burst: 12 },
  perIp: { perSecond: 0.001, burst: 40 },
};

/** The code-side config, given the environment (Node) or the bindings (workerd). */
export function testEdgeOverrides(env: EdgeEnv): Partial<EdgeConfig> & Pick<EdgeConfig, 'queries'> {
  return {
    queries: TEST_QUERIES,
    authorize: jwtSession({ secret: String(env.SESSION_SECRET) }),
    allowedOrigins: [APP_ORIGIN],
    // Behind the suite's "proxy" each test is its own client address, so per-IP buckets are per test.
    clientIp: (c) => c.req.header('x-forwarded-for')?.split(',')[0]?.trim() ?? 'direct',
    rateLimit: TEST_LIMITS,
    ids: { renewGrace: '1h' },
    bundle: 'export const marker = "analytics-chart test bundle";\n',
  };
}
