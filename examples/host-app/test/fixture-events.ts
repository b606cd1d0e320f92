/**
 * Hand-placed events for the host app's tests, and the answers they imply, counted with plain
 * loops: the expected values never come from the engine or the edge.
 */

/** One event as the engine's bulk-log endpoint takes it. */
export interface FixtureEvent {
  timestamp: number;
  json: Record<string, unknown>;
}

const DAY = 86_400;

/**
 * acme: 3 events a day for the last 10 days; globex: 1 a day. Each one an hour off the day
 * boundary back from `now`, so "7 days ago" windows never cut through an event.
 */
export function fixtureEvents(now: number): FixtureEvent[] {
  const events: FixtureEvent[] = [];
  for (let day = 0; day < 10; day++) {
    for (let i = 0; i < 3; i++) {
      events.push({
        timestamp: now - day * DAY - 3600 - i * 60,
        json: { tenant: 'acme', event: i === 0 ? 'signup' : 'page_view', plan: 'pro' },
      });
    }
    events.push({
      timestamp: now - day * DAY - 7200,
      json: { tenant: 'globex', event: 'page_view', plan: 'free' },
    });
  }
  return events;
}

/** Events of a tenant (and optionally one event name) strictly inside (start, end). */
export function countEvents(
  events: readonly FixtureEvent[],
  tenant: string,
  start: number,
  end: number,
  event?: string,
): number {
  let n = 0;
  for (const e of events) {
    if (e.json.tenant !== tenant) continue;
    if (event !== undefined && e.json.event !== event) continue;
    if (e.timestamp > start && e.timestamp < end) n++;
  }
  return n;
}
