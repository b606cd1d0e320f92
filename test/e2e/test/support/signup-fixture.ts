import type { QueryDefinition } from '@analytics-chart/edge';
import { dailyEvents, TENANT_FILTER } from '@analytics-chart/test-kit/queries';

const DAY = 86_400;

/** The CMS embed suites' one chart: a tenant's signups per day, the tenant fixed by the signer. */
export const SIGNUP_QUERIES: Record<string, QueryDefinition> = {
  'daily-signups': dailyEvents({
    title: 'Signups per day',
    filters: [TENANT_FILTER, ['event', '=', 'signup']],
    params: { tenant: { from: 'signer', pattern: '[a-z]{1,20}' } },
  }),
};

/**
 * Acme signs up `day + 2` times on each of the last seven days; Globex, whose data no acme chart
 * may show, 9 times.
 */
export function signupEvents(now: number) {
  const events: { timestamp: number; json: Record<string, unknown> }[] = [];
  for (let day = 0; day < 7; day++) {
    for (let i = 0; i < day + 2; i++) {
      events.push({
        timestamp: now - day * DAY - 3600 - i * 60,
        json: { tenant: 'acme', event: 'signup' },
      });
    }
    for (let i = 0; i < 9; i++) {
      events.push({
        timestamp: now - day * DAY - 7200 - i * 60,
        json: { tenant: 'globex', event: 'signup', email: 'ceo@globex.example' },
      });
    }
  }
  return events;
}
