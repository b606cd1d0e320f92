/**
 * Queries for public embeds (a plain HTML page, a CMS article): no session, so the tenant is a
 * signer parameter fixed when the id is minted (`pnpm edge sign --public --param tenant=acme`)
 * and locked inside the signed id. The enum keeps a typo from minting an id that shows nothing.
 */
import type { ParamSpec, QueryDefinition } from '@analytics-chart/edge';
import { DASHBOARD_TIME_ZONE, TENANTS } from './dashboard-queries.ts';

const tenantFilter = [['tenant', '=', { $param: 'tenant' }]];
const tenantParam: Record<string, ParamSpec> = { tenant: { from: 'signer', enum: [...TENANTS] } };

/** The public queries, by name. */
export const PUBLIC_QUERIES: Readonly<Record<string, QueryDefinition>> = {
  'public-events': {
    title: 'Events per day',
    query: {
      graph_type: 'Single Line',
      IANA_time_zone: DASHBOARD_TIME_ZONE,
      start: '30 days ago',
      end: 'now',
      granularity: 'Day',
      filters: tenantFilter,
    },
    params: tenantParam,
    ranges: {
      '7d': { label: 'Last 7 days', start: '7 days ago', end: 'now', granularity: 'Day' },
      '30d': { label: 'Last 30 days', start: '30 days ago', end: 'now', granularity: 'Day' },
      '90d': { label: 'Last 90 days', start: '90 days ago', end: 'now', granularity: 'Week' },
    },
    defaultRange: '30d',
  },
  'public-signups': {
    title: 'Signups this week',
    query: {
      graph_type: 'Single Value',
      IANA_time_zone: DASHBOARD_TIME_ZONE,
      start: '7 days ago',
      end: 'now',
      compare: '1 week ago',
      filters: [...tenantFilter, ['event', '=', 'signup']],
    },
    params: tenantParam,
  },
  'public-countries': {
    title: 'Visitors by country, last 30 days',
    query: {
      graph_type: 'Bar Chart',
      IANA_time_zone: DASHBOARD_TIME_ZONE,
      start: '30 days ago',
      end: 'now',
      split: 'country',
      filters: [...tenantFilter, ['event', '=', 'page_view']],
    },
    params: tenantParam,
  },
};
