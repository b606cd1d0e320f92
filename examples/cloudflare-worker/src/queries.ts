/**
 * The Worker's query registry: what each chart may show. Session charts take the tenant from
 * the host's session cookie, so a viewer can never name another tenant; the public one takes it
 * from whoever signs the id (`npx analytics-edge sign --public --param tenant=…`), locked inside
 * the id. Put your own charts here.
 */
import type { QueryDefinition } from '@analytics-chart/edge';

const ofTenant = ['tenant', '=', { $param: 'tenant' }];
const signups = ['event', '=', 'signup'];

/** The charts a signed-in viewer sees, by name. */
export const SESSION_QUERIES: Readonly<Record<string, QueryDefinition>> = {
  'signups-week': {
    title: 'Signups, last 7 days',
    query: {
      graph_type: 'Single Value',
      IANA_time_zone: 'UTC',
      start: '7 days ago',
      end: 'now',
      compare: '1 week ago',
      filters: [ofTenant, signups],
    },
    params: { tenant: { from: 'session' } },
  },
  'events-daily': {
    title: 'Events per day',
    query: {
      graph_type: 'Single Line',
      IANA_time_zone: 'UTC',
      start: '30 days ago',
      end: 'now',
      granularity: 'Day',
      filters: [ofTenant],
    },
    params: { tenant: { from: 'session' } },
    ranges: {
      '7d': { label: 'Last 7 days', start: '7 days ago', end: 'now', granularity: 'Day' },
      '30d': { label: 'Last 30 days', start: '30 days ago', end: 'now', granularity: 'Day' },
    },
    defaultRange: '30d',
  },
  'top-countries': {
    title: 'Events by country, last 30 days',
    query: {
      graph_type: 'Table',
      IANA_time_zone: 'UTC',
      start: '30 days ago',
      end: 'now',
      split: 'country',
      filters: [ofTenant],
    },
    params: { tenant: { from: 'session' } },
  },
};

/** The Worker's whole registry: the session charts and one public chart for embeds. */
export const WORKER_QUERIES: Readonly<Record<string, QueryDefinition>> = {
  ...SESSION_QUERIES,
  'public-signups': {
    title: 'Signups this week',
    query: {
      graph_type: 'Single Value',
      IANA_time_zone: 'UTC',
      start: '7 days ago',
      end: 'now',
      filters: [ofTenant, signups],
    },
    params: { tenant: { from: 'signer', pattern: '[a-z0-9-]{1,40}' } },
  },
};
