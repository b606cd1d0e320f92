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
  events: FixtureEvent[],
  tenant: string,
  start: number,
  end: number,
): FixtureEvent[] {
  return events.filter((e) => e.json.tenant === tenant && e.timestamp > start && e.timestamp < end);
}

/** Count per UTC day for a tenant inside (start, end): only days with events. */
export function dailyCounts(
  events: FixtureEvent[],
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

/**
 * A minimal answer of the data endpoint for the queries of the test registry, computed from the
 * fixtures: what the fault proxy answers when no real engine is behind it.
 */
export function answerFromFixtures(
  events: FixtureEvent[],
  body: Record<string, unknown>,
  now: number,
): unknown {
  const ago = (value: unknown): number => {
    if (value === 'now') return now;
    const m = /^(\d+) (day|week)s? ago$/.exec(String(value));
    if (!m) return Number(value);
    return now - Number(m[1]) * (m[2] === 'week' ? 7 : 1) * DAY;
  };
  const start = ago(body.start);
  const end = ago(body.end);
  const filters = (body.filters as [string, string, unknown][] | undefined) ?? [];
  const tenant = String(filters.find((f) => f[0] === 'tenant')?.[2] ?? '');
  const matching = eventsIn(events, tenant, start, end);
  switch (body.graph_type) {
    case 'Single Line': {
      const counts = dailyCounts(events, tenant, start, end);
      const result = [];
      for (let t = start - (start % DAY); t < end; t += DAY) {
        result.push({ timestamp: utcDay(t), Count: counts.get(utcDay(t)) ?? 0 });
      }
      return { result, metadata: { granularity: 'Day', combined: matching.length } };
    }
    case 'Single Value':
      return { result: [{ Count: matching.length }], metadata: { combined: matching.length } };
    case 'Samples':
      return {
        result: [...matching].sort((a, b) => b.timestamp - a.timestamp).slice(0, 50),
        metadata: {},
      };
    default:
      return { error: `the fixture answer knows no ${String(body.graph_type)}` };
  }
}
