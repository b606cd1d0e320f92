import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_COLLECTION } from '@analytics-chart/protocol';
import { appendRecords } from '../ingest/append-events.ts';
import type { EventRecord } from '../ingest/event-records.ts';
import { WorkspaceDb } from '../storage/duckdb/workspace-db.ts';

/** How the demo workspace is generated. */
export interface DemoDataOptions {
  /** The engine's data directory. */
  dataDir: string;
  /** Workspace (file `<dataDir>/<workspace>.duckdb`), default `default`. */
  workspace?: string;
  /** Collection, default `all_events`. */
  collection?: string;
  /** How many events (default 1,000,000). */
  events?: number;
  /** PRNG seed: the same seed, count and `now` give the same events (default 42). */
  seed?: number;
  /** The end of the 90 days, in Unix seconds (default: now). */
  now?: number;
  /** Replace an existing workspace file instead of leaving it alone (default false). */
  replace?: boolean;
  /** Called after each written batch with the number of events written so far. */
  onProgress?: (written: number, total: number) => void;
}

/** What {@link generateDemoData} did. */
export interface DemoDataResult {
  /** The workspace database file. */
  file: string;
  /** Events written (0 when skipped). */
  events: number;
  /** True when the collection already had events and `replace` was not set. */
  skipped: boolean;
}

/** The fields of a demo event, as documented in the README. */
export interface DemoEvent {
  event: 'page_view' | 'login' | 'feature_used' | 'signup' | 'purchase' | 'error';
  tenant: 'acme' | 'globex';
  plan: 'free' | 'pro' | 'team' | 'enterprise';
  country: string;
  path: string;
  user_id: string;
  session_ms: number;
  device: { os: string; browser: string };
  feature?: string;
  price?: number;
  currency?: 'USD';
  error_code?: number;
}

const DAYS = 90;
const BATCH = 50_000;

/** mulberry32: a small, fast, seedable PRNG (uniform in [0, 1)). */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function weighted<T>(random: () => number, items: ReadonlyArray<readonly [T, number]>): T {
  const total = items.reduce((sum, [, w]) => sum + w, 0);
  let r = random() * total;
  for (const [item, w] of items) {
    r -= w;
    if (r < 0) return item;
  }
  return (items[items.length - 1] as readonly [T, number])[0];
}

const COUNTRIES = [
  ['US', 34],
  ['GB', 11],
  ['DE', 10],
  ['FR', 8],
  ['IN', 9],
  ['BR', 7],
  ['JP', 6],
  ['CA', 6],
  ['AU', 5],
  ['NL', 4],
] as const;
const PLANS = [
  ['free', 58],
  ['pro', 25],
  ['team', 12],
  ['enterprise', 5],
] as const;
const PRICES = { free: 0, pro: 29, team: 99, enterprise: 499 } as const;
const OS = [
  ['ios', 24],
  ['android', 26],
  ['macos', 18],
  ['windows', 26],
  ['linux', 6],
] as const;
const BROWSERS = [
  ['chrome', 60],
  ['safari', 22],
  ['firefox', 9],
  ['edge', 9],
] as const;
const PATHS = [
  ['/', 20],
  ['/pricing', 9],
  ['/docs', 14],
  ['/blog', 8],
  ['/dashboard', 30],
  ['/settings', 6],
  ['/reports', 13],
] as const;
const FEATURES = [
  ['export', 20],
  ['share', 15],
  ['filter', 35],
  ['alert', 10],
  ['dashboard_edit', 20],
] as const;

/** Demo events as records ready to write (see {@link demoEventObjects}). */
export function* demoEvents(count: number, seed: number, now: number): Generator<EventRecord> {
  for (const { timestamp, json } of demoEventObjects(count, seed, now)) {
    yield { timestamp, payload: JSON.stringify(json) };
  }
}

/**
 * Demo events, oldest first, over the 90 days before `now`: more traffic in the (UTC) daytime
 * and on weekdays, slowly growing, from a pool of users who each keep one tenant, plan,
 * country and device. Deterministic for a given seed, count and `now`.
 */
export function* demoEventObjects(
  count: number,
  seed: number,
  now: number,
): Generator<{ timestamp: number; json: DemoEvent }> {
  const random = seededRandom(seed);
  const end = Math.floor(now);
  const start = end - DAYS * 86_400;
  const hours = DAYS * 24;
  const weights: number[] = [];
  for (let h = 0; h < hours; h++) {
    const t = start + h * 3600;
    const hourOfDay = Math.floor((t % 86_400) / 3600);
    const weekday = (Math.floor(t / 86_400) + 4) % 7; // 0 = Sunday
    const daily = 0.35 + Math.exp(-((hourOfDay - 15) ** 2) / 18);
    const weekly = weekday === 0 || weekday === 6 ? 0.55 : 1;
    const growth = 0.8 + (0.4 * h) / hours;
    weights.push(daily * weekly * growth);
  }
  const total = weights.reduce((a, b) => a + b, 0);
  const users = Math.max(50, Math.round(count / 25));
  const userTraits = (id: number) => {
    const r = seededRandom(seed * 7919 + id);
    return {
      tenant: r() < 0.6 ? ('acme' as const) : ('globex' as const),
      plan: weighted(r, PLANS),
      country: weighted(r, COUNTRIES),
      device: { os: weighted(r, OS), browser: weighted(r, BROWSERS) },
    };
  };
  let emitted = 0;
  let expected = 0;
  for (let h = 0; h < hours; h++) {
    expected += ((weights[h] ?? 0) / total) * count;
    const inHour = h === hours - 1 ? count - emitted : Math.round(expected) - emitted;
    const seconds: number[] = [];
    for (let i = 0; i < inHour; i++) seconds.push(Math.floor(random() * 3600));
    seconds.sort((a, b) => a - b);
    for (const second of seconds) {
      const timestamp = Math.min(start + h * 3600 + second + 1, end - 1);
      const userId = Math.floor(random() ** 1.6 * users);
      const traits = userTraits(userId);
      const event = weighted(random, [
        ['page_view', 62],
        ['login', 12],
        ['feature_used', 13],
        ['signup', 4],
        ['purchase', 6],
        ['error', 3],
      ] as const);
      const payload: DemoEvent = {
        event,
        tenant: traits.tenant,
        plan: traits.plan,
        country: traits.country,
        path:
          event === 'signup'
            ? '/signup'
            : event === 'purchase'
              ? '/checkout'
              : weighted(random, PATHS),
        user_id: `u_${userId}`,
        session_ms: Math.round(2000 + -Math.log(1 - random()) * 90_000),
        device: traits.device,
      };
      if (event === 'feature_used') payload.feature = weighted(random, FEATURES);
      if (event === 'purchase') {
        const base = PRICES[traits.plan] || 9;
        payload.price = Math.round(base * (0.8 + random() * 0.6) * 100) / 100;
        payload.currency = 'USD';
      }
      if (event === 'error')
        payload.error_code = weighted(random, [
          [500, 5],
          [502, 2],
          [404, 3],
        ] as const);
      emitted++;
      yield { timestamp, json: payload };
    }
  }
}

/**
 * Writes the seeded demo workspace: `<dataDir>/<workspace>.duckdb` with `events` demo events in
 * `collection`. Leaves an existing collection alone unless `replace` is set (which deletes the
 * workspace file first). Call it before an engine opens the same data directory.
 */
export async function generateDemoData(options: DemoDataOptions): Promise<DemoDataResult> {
  const workspace = options.workspace ?? 'default';
  const collection = options.collection ?? DEFAULT_COLLECTION;
  const count = options.events ?? 1_000_000;
  const file = join(options.dataDir, `${workspace}.duckdb`);
  await mkdir(options.dataDir, { recursive: true });
  if (options.replace && existsSync(file)) {
    await rm(file, { force: true });
    await rm(`${file}.wal`, { force: true });
  }
  const db = await WorkspaceDb.open(file);
  try {
    if (db.catalog.get(collection)) return { file, events: 0, skipped: true };
    let batch: EventRecord[] = [];
    let written = 0;
    const flush = async () => {
      const records = batch;
      batch = [];
      await db.write(async (tx) => appendRecords(tx, await tx.collection(collection), records));
      written += records.length;
      options.onProgress?.(written, count);
    };
    const now = options.now ?? Date.now() / 1000;
    for (const { timestamp, json } of demoEventObjects(count, options.seed ?? 42, now)) {
      batch.push({
        timestamp,
        payload: JSON.stringify(json),
        json: json as unknown as Record<string, unknown>,
      });
      if (batch.length >= BATCH) await flush();
    }
    if (batch.length > 0) await flush();
    return { file, events: written, skipped: false };
  } finally {
    await db.close();
  }
}
