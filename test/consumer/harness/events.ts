/** One NDJSON line of `analytics-engine load`. */
export interface LoadLine {
  timestamp: number;
  json: { event: 'signup' | 'page_view'; tenant: 'acme' | 'globex'; user_id: string };
}

const DAY = 86_400;

/**
 * The events the suite loads into the engine's `events` collection: over the last ten days,
 * a few signups and page views per tenant and day, counts varying by day and tenant so that a
 * tenant mix-up or a dropped filter changes every total.
 */
export function consumerEvents(nowSeconds: number): LoadLine[] {
  const lines: LoadLine[] = [];
  for (let day = 0; day < 10; day++) {
    for (const [t, tenant] of (['acme', 'globex'] as const).entries()) {
      const signups = ((day * 3 + t * 2) % 5) + 1 + t;
      for (let n = 0; n < signups + 2; n++) {
        lines.push({
          // Mid-day instants, at least an hour old, so "now" and day edges never split a count.
          timestamp: nowSeconds - day * DAY - 3600 - n * 60,
          json: { event: n < signups ? 'signup' : 'page_view', tenant, user_id: `${tenant}-${n}` },
        });
      }
    }
  }
  return lines;
}

/** Signups of one tenant (or all), counted from the lines themselves. */
export function countSignups(lines: readonly LoadLine[], tenant?: string): number {
  return lines.filter(
    (line) => line.json.event === 'signup' && (tenant === undefined || line.json.tenant === tenant),
  ).length;
}
