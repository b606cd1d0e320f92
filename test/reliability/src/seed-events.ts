/**
 * Events the items ingest before they query: `{uid, tenant, tag, n}` spread over the last 29
 * days (inside every 30-day window), through `/api/bulk-log` as the service's clients send them.
 */
import { postJson } from './post-json.ts';
import type { Random } from './seeded-random.ts';

/** One seeded event. */
export interface SeedEvent {
  timestamp: number;
  json: { uid: string; tenant: string; tag: string; n: number };
}

/** The tenants and tags the seeded events use. */
export const TENANTS = ['acme', 'globex', 'initech'] as const;
export const TAGS = ['a', 'b', 'c', 'd'] as const;

/** Makes `count` events (timestamps between 1 hour and 29 days ago) and ingests them. */
export async function seedEvents(
  engineUrl: string,
  apiKey: string,
  count: number,
  random: Random,
): Promise<SeedEvent[]> {
  // Every sixth hour, so that bulk-log requests (one timestamp each) carry many events.
  const hour = Math.floor(Date.now() / 3_600_000) * 3600;
  const events: SeedEvent[] = Array.from({ length: count }, (_, i) => ({
    timestamp: hour - 6 * 3600 * random.int(1, 115),
    json: {
      uid: `seed-${i}`,
      tenant: random.pick(TENANTS),
      tag: random.pick(TAGS),
      n: random.int(0, 100),
    },
  }));
  // bulk-log carries one timestamp per request: one request per event group of equal time.
  const byTime = new Map<number, SeedEvent[]>();
  for (const e of events) byTime.set(e.timestamp, [...(byTime.get(e.timestamp) ?? []), e]);
  const groups = [...byTime];
  for (let i = 0; i < groups.length; i += 64) {
    await Promise.all(
      groups.slice(i, i + 64).map(async ([timestamp, group]) => {
        const answer = await postJson(`${engineUrl}/api/bulk-log`, {
          api_key: apiKey,
          timestamp,
          jsons: group.map((e) => JSON.stringify(e.json)),
        });
        if (answer.status !== 200)
          throw new Error(`seeding failed: ${answer.status} ${answer.text}`);
      }),
    );
  }
  return events;
}
