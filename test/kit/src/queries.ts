/**
 * Query definitions the test harnesses share. Plain data in the edge registry's shape (the kit
 * does not depend on the edge package, which depends on the kit for its tests).
 */

/** A filter keeping one tenant's events, the tenant taken from the `tenant` parameter. */
export const TENANT_FILTER = ['tenant', '=', { $param: 'tenant' }];

/** The `tenant` parameter taken from the viewer's session. */
export const SESSION_TENANT = { tenant: { from: 'session' as const } };

/** The `tenant` parameter fixed by whoever signs a public id, as a slug. */
export const SIGNER_TENANT = { tenant: { from: 'signer' as const, pattern: '[a-z0-9-]{1,40}' } };

/** The viewer ranges "last 7 days" and "last 30 days", by day. */
export const WEEK_AND_MONTH = {
  '7d': { label: 'Last 7 days', start: '7 days ago', end: 'now', granularity: 'Day' as const },
  '30d': { label: 'Last 30 days', start: '30 days ago', end: 'now', granularity: 'Day' as const },
};

/** What {@link dailyEvents} may add to its definition. */
export interface DailyEventsOptions {
  title: string;
  /** Conditions on the events, e.g. `[TENANT_FILTER]`; none by default. */
  filters?: unknown[];
  params?: Record<string, { from: 'session' } | { from: 'signer'; pattern?: string }>;
  /** The zone of the day buckets. @default 'UTC' */
  timeZone?: string;
}

/** A Single Line of events per day over the last seven days. */
export function dailyEvents(options: DailyEventsOptions) {
  return {
    title: options.title,
    query: {
      graph_type: 'Single Line',
      IANA_time_zone: options.timeZone ?? 'UTC',
      start: '7 days ago',
      end: 'now',
      granularity: 'Day',
      ...(options.filters ? { filters: options.filters } : {}),
    },
    ...(options.params ? { params: options.params } : {}),
  };
}

/** What {@link tenantMonth} may add to its definition. */
export interface TenantMonthOptions {
  title?: string;
  /** Where the tenant comes from: {@link SESSION_TENANT}, {@link SIGNER_TENANT} or another. */
  params: DailyEventsOptions['params'];
  /** The field whose values split the answer (Table, Bar Chart). */
  split?: string;
}

/** One tenant's events of the last thirty days as `graph` (Single Value, Table, Samples…). */
export function tenantMonth(graph: string, options: TenantMonthOptions) {
  return {
    ...(options.title ? { title: options.title } : {}),
    query: {
      graph_type: graph,
      IANA_time_zone: 'UTC',
      start: '30 days ago',
      end: 'now',
      ...(options.split ? { split: options.split } : {}),
      filters: [TENANT_FILTER],
    },
    params: options.params,
  };
}
