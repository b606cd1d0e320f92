/**
 * The edge configuration both runtimes run in the shared suite: the Node harness builds it in
 * the test process, the workerd harness bundles this module into the worker. Secrets come from
 * the environment / bindings exactly as in production.
 */

import {
  dailyEvents,
  SESSION_TENANT,
  SIGNER_TENANT,
  TENANT_FILTER,
  tenantMonth,
  WEEK_AND_MONTH,
} from '@analytics-chart/test-kit/queries';
import type { EdgeEnv } from '../../src/config/config-from-env.ts';
import type { EdgeConfig } from '../../src/config/edge-config.ts';
import type { QueryDefinition } from '../../src/registry/query-definition.ts';
import { jwtSession } from '../../src/session/jwt-session.ts';

/** The registry of the suite. */
export const TEST_QUERIES: Record<string, QueryDefinition> = {
  'tenant-daily': {
    ...dailyEvents({ title: 'Events per day', filters: [TENANT_FILTER], params: SESSION_TENANT }),
    ranges: WEEK_AND_MONTH,
  },
  'public-total': tenantMonth('Single Value', { title: 'Events (30 days)', params: SIGNER_TENANT }),
  'public-daily': {
    ...dailyEvents({ title: 'Daily events', filters: [TENANT_FILTER], params: SIGNER_TENANT }),
    ranges: WEEK_AND_MONTH,
  },
  'short-cache': {
    ...tenantMonth('Single Value', { params: { tenant: { from: 'signer' } } }),
    cacheSeconds: 1,
  },
  'recent-events': {
    ...tenantMonth('Samples', { title: 'Recent events', params: SESSION_TENANT }),
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
    params: SESSION_TENANT,
  },
  'admin-total': {
    ...tenantMonth('Single Value', { title: 'Events (admins only)', params: SESSION_TENANT }),
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
    // The admin API for sessions with the admin role (the Workers registry tests revoke through it).
    admin: (session) => session.role === 'admin',
  };
}
