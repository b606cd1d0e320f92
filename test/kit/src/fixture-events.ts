/**
 * The events every suite ingests, and the expected answers computed from them with plain loops
 * (independently of the engine and of the edge). Times are relative to the suite's start so the
 * registry's relative windows (`7 days ago` … `now`) always cover them.
 */

export interface FixtureEvent {
  timestamp: number;
  json: Record<string, unknown>;
}

const DAY = 86_400;

/** Two tenants over ten days; `email` and `card` are fields no chart may ever reveal. */
export function fixtureEvents(now: number): FixtureEvent[] {
  const events: FixtureEvent[] = [];
  const pages = ['/home', '/pricing', '/docs'];
  for (let day = 0; day < 10; day++) {
    // acme: day+1 events per day; globex: 2 per day. Placed mid-day back from now, never at "now".
    for (let i = 0; i <= day; i++) {
      events.push({
        timestamp: now - day * DAY - 3600 - i * 60,
        json: {
          tenant: 'acme',
          event: i % 2 === 0 ? 'view' : 'signup',
          page: pages[i % 3],
          country: i % 3 === 2 ? 'DE' : 'US',
          user: { plan: i % 2 === 0 ? 'free' : 'pro', email: `acme-user-${i}@secret.example` },
          card: '4242-4242',
        },
      });
    }
    for (let i = 0; i < 2; i++) {
      events.push({
        timestamp: now - day * DAY - 7200 - i * 60,
        json: {
          tenant: 'globex',
          event: 'view',
          page: '/home',
          country: 'FR',
          user: { plan: 'pro', email: 'g@secret.example' },
        },
      });
    }
  }
  return events;
}

/** The UTC day label of a Unix time: `2024-03-05`. */
export function utcDay(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10);
}

/** Events of a tenant strictly inside (start, end). */
export function eventsIn(
  events: readonly FixtureEvent[],
  tenant: string,
  start: number,
  end: number,
): FixtureEvent[] {
  return events.filter((e) => e.json.tenant === tenant && e.timestamp > start && e.timestamp < end);
}

/** Count per UTC day for a tenant inside (start, end): only days with events. */
export function dailyCounts(
  events: readonly FixtureEvent[],
  tenant: string,
  start: number,
  end: number,
): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of eventsIn(events, tenant, start, end)) {
    const label = utcDay(e.timestamp);
    counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  return counts;
}

/** Events of a tenant (and optionally one event name) strictly inside (start, end). */
export function countEvents(
  events: readonly FixtureEvent[],
  tenant: string,
  start: number,
  end: number,
  event?: string,
): number {
  return eventsIn(events, tenant, start, end).filter(
    (e) => event === undefined || e.json.event === event,
  ).length;
}

/**
 * Views on each of the last five days, day `d` back holding `d + 1` of them, a few hours before
 * the current clock time: every one inside "7 days ago … now", none near a day's edge.
 */
export function recentViews(now: number): FixtureEvent[] {
  const events: FixtureEvent[] = [];
  for (let d = 1; d <= 5; d++) {
    for (let i = 0; i <= d; i++) {
      events.push({ timestamp: now - d * DAY - 3 * 3600 - i * 60, json: { event: 'view', i } });
    }
  }
  return events;
}

/** Events per UTC day label, counted with a loop. */
export function countByUtcDay(events: readonly FixtureEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of events) {
    const day = utcDay(e.timestamp);
    counts[day] = (counts[day] ?? 0) + 1;
  }
  return counts;
}
