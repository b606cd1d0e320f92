import type { FixtureEvent } from './reference.ts';

/** The pinned "now" of the query tests: 2024-11-20T12:00:00Z. */
export const NOW = 1_732_104_000;

/** A seeded generator of numbers in [0, 1) (mulberry32). */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Instants around the DST changes of Los Angeles and London in 2024, each second given. */
const DST_EDGES = [
  '2024-03-10T07:59:59Z', // LA 23:59:59 PST, Mar 9
  '2024-03-10T08:00:00Z', // LA 00:00 PST, Mar 10
  '2024-03-10T09:59:59Z', // LA 01:59:59 PST, just before spring-forward
  '2024-03-10T10:00:00Z', // LA 03:00 PDT
  '2024-03-11T06:59:59Z', // LA 23:59:59 PDT, Mar 10 (a 23-hour day)
  '2024-03-31T00:59:59Z', // London 00:59:59 GMT
  '2024-03-31T01:00:00Z', // London 02:00 BST
  '2024-10-27T00:30:00Z', // London 01:30 BST
  '2024-10-27T01:30:00Z', // London 01:30 GMT (the repeated hour)
  '2024-11-03T08:30:00Z', // LA 01:30 PDT
  '2024-11-03T09:30:00Z', // LA 01:30 PST (the repeated hour)
  '2024-11-04T07:59:59Z', // LA 23:59:59 PST, Nov 3 (a 25-hour day)
].map((iso) => Date.parse(iso) / 1000);

/**
 * A seeded fixture: about 1,600 events from February to "now", denser in the last two days,
 * with every kind of value the semantics distinguish: strings, numbers, numeric strings,
 * booleans, arrays, nested objects, missing fields, and a key holding numbers and words.
 */
export function fixtureEvents(): FixtureEvent[] {
  const r = random(7);
  const pick = <T>(items: readonly T[]) => items[Math.floor(r() * items.length)] as T;
  const times: number[] = [...DST_EDGES];
  const start = Date.parse('2024-02-01T00:00:00Z') / 1000;
  for (let i = 0; i < 1000; i++) times.push(start + Math.floor(r() * (NOW - start)));
  for (let i = 0; i < 500; i++) times.push(NOW - Math.floor(r() * 2 * 86_400));
  for (let i = 0; i < 100; i++) times.push(NOW - Math.floor(r() * 3 * 3600));
  times.push(NOW - 10, NOW - 10, NOW - 10); // events sharing a second
  times.sort((a, b) => a - b);
  const countries = ['US', 'GB', 'DE', 'FR', 'IN', 'BR', 'JP', 'CA', 'AU', 'NL', 'SE', 'ES', 'IT'];
  return times.map((timestamp, i) => {
    const event = pick(['page_view', 'page_view', 'page_view', 'signup', 'purchase', 'login']);
    const json: Record<string, unknown> = {
      id: i,
      event,
      tenant: pick(['acme', 'globex']),
      plan: pick(['free', 'pro', 'team']),
      country: pick(countries),
      device: { os: pick(['ios', 'android', 'macos']), version: pick([14, 15, '16.1']) },
      active: r() < 0.5,
    };
    if (event === 'purchase') json.price = pick([9.99, 19.5, 29, 49, 99.95, '12.5', 'free', 5]);
    if (r() < 0.3) json.tags = pick([['beta'], ['beta', 'vip'], ['vip', 7], []]);
    if (r() < 0.5) json.code = pick([1, 2, 10, 'A1', '2', 'x10']);
    if (r() < 0.1) json.note = pick(['hello world', 'Hello', 'say "hi"']);
    return { timestamp, json };
  });
}
