/**
 * The query registry the edge under test serves: session-bound and public charts over the
 * events the items ingest (`{uid, tenant, tag, n}`), cached and uncached (`cacheSeconds: 0`).
 */
import type { QueryDefinition } from '@analytics-chart/edge';

const tenantFilter = [['tenant', '=', { $param: 'tenant' }]];

const ranges = {
  '24h': { label: 'Last 24 hours', start: '24 hours ago', end: 'now', granularity: 'Hour' },
  '7d': { label: 'Last 7 days', start: '7 days ago', end: 'now', granularity: 'Day' },
  '30d': { label: 'Last 30 days', start: '30 days ago', end: 'now', granularity: 'Day' },
} as const;

/** Names to definitions, as a host app would register them. */
export const RELIABILITY_QUERIES: Record<string, QueryDefinition> = {
  daily: {
    title: 'Events per day',
    query: {
      graph_type: 'Single Line',
      IANA_time_zone: 'UTC',
      start: '7 days ago',
      end: 'now',
      granularity: 'Day',
      filters: tenantFilter,
    },
    params: { tenant: { from: 'session' } },
    ranges,
    defaultRange: '7d',
  },
  'by-tag': {
    title: 'Events by tag',
    query: {
      graph_type: 'Table',
      IANA_time_zone: 'UTC',
      start: '30 days ago',
      end: 'now',
      split: 'tag',
      filters: tenantFilter,
    },
    params: { tenant: { from: 'session' } },
  },
  'public-count': {
    title: 'Events (30 days)',
    query: {
      graph_type: 'Single Value',
      IANA_time_zone: 'UTC',
      start: '30 days ago',
      end: 'now',
      filters: tenantFilter,
    },
    params: { tenant: { from: 'signer', pattern: '[a-z0-9-]{1,40}' } },
  },
  'public-daily': {
    title: 'Events per day (public)',
    query: {
      graph_type: 'Single Line',
      IANA_time_zone: 'Europe/Berlin',
      start: '7 days ago',
      end: 'now',
      granularity: 'Day',
      filters: tenantFilter,
    },
    params: { tenant: { from: 'signer', pattern: '[a-z0-9-]{1,40}' } },
    ranges,
  },
  'public-live': {
    title: 'Events by tag, never cached',
    query: {
      graph_type: 'Bar Chart',
      IANA_time_zone: 'UTC',
      start: '30 days ago',
      end: 'now',
      split: 'tag',
      filters: tenantFilter,
    },
    params: { tenant: { from: 'signer', pattern: '[a-z0-9-]{1,40}' } },
    cacheSeconds: 0,
  },
  recent: {
    title: 'Recent events',
    query: {
      graph_type: 'Samples',
      IANA_time_zone: 'UTC',
      start: '30 days ago',
      end: 'now',
      filters: tenantFilter,
    },
    params: { tenant: { from: 'session' } },
    fields: ['uid', 'tag'],
  },
};
