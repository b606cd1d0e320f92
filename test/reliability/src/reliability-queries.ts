/**
 * The query registry the edge under test serves: session-bound and public charts over the
 * events the items ingest (`{uid, tenant, tag, n}`), cached and uncached (`cacheSeconds: 0`).
 */
import type { QueryDefinition } from '@analytics-chart/edge';
import {
  dailyEvents,
  SESSION_TENANT,
  SIGNER_TENANT,
  TENANT_FILTER,
  tenantMonth,
} from '@analytics-chart/test-kit/queries';

const ranges = {
  '24h': { label: 'Last 24 hours', start: '24 hours ago', end: 'now', granularity: 'Hour' },
  '7d': { label: 'Last 7 days', start: '7 days ago', end: 'now', granularity: 'Day' },
  '30d': { label: 'Last 30 days', start: '30 days ago', end: 'now', granularity: 'Day' },
} as const;

/** Names to definitions, as a host app would register them. */
export const RELIABILITY_QUERIES: Record<string, QueryDefinition> = {
  daily: {
    ...dailyEvents({ title: 'Events per day', filters: [TENANT_FILTER], params: SESSION_TENANT }),
    ranges,
    defaultRange: '7d',
  },
  'by-tag': tenantMonth('Table', { title: 'Events by tag', params: SESSION_TENANT, split: 'tag' }),
  'public-count': tenantMonth('Single Value', {
    title: 'Events (30 days)',
    params: SIGNER_TENANT,
  }),
  'public-daily': {
    ...dailyEvents({
      title: 'Events per day (public)',
      filters: [TENANT_FILTER],
      params: SIGNER_TENANT,
      timeZone: 'Europe/Berlin',
    }),
    ranges,
  },
  'public-live': {
    ...tenantMonth('Bar Chart', {
      title: 'Events by tag, never cached',
      params: SIGNER_TENANT,
      split: 'tag',
    }),
    cacheSeconds: 0,
  },
  recent: {
    ...tenantMonth('Samples', { title: 'Recent events', params: SESSION_TENANT }),
    fields: ['uid', 'tag'],
  },
};
