/**
 * The Redis store under three edges in one process, each with its own connections, served over
 * real sockets against one real redis-server: shared rate limits, and a Redis that stops
 * answering (SIGSTOP) without closing its sockets.
 */

import { type RedisServer, startRedis } from '@analytics-chart/test-kit/redis-server';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveEdge } from '../src/adapter/node/serve-edge.ts';
import { createEdge, type Edge } from '../src/create-edge.ts';
import type { LogEntry } from '../src/log/logger.ts';
import type { EdgeStore } from '../src/store/edge-store.ts';
import { redisStore } from '../src/store/redis-store.ts';
import { generateSigningKey } from '../src/tokens/signing-keys.ts';

const RATE = { perSecond: 20, burst: 20 };
let redis: RedisServer;
const logs: LogEntry[] = [];
const stores: EdgeStore[] = [];
const served: { url: string; close(): Promise<void> }[] = [];
let edges: Edge[] = [];
/** Backend calls by query start (each query below has its own). */
const calls = new Map<string, number>();
let failing = false;

beforeAll(async () => {
  redis = await startRedis();
  const key = generateSigningKey();
  for (let i = 0; i < 3; i++) {
    const store = await redisStore({ url: redis.url, log: (e) => logs.push(e) });
    stores.push(store);
    const edge = createEdge({
      signingKeys: [key],
      backend: {
        query: async (body) => {
          const name = String(body.graph_type);
          calls.set(name, (calls.get(name) ?? 0) + 1);
          await new Promise((r) => setTimeout(r, 150));
          if (failing) throw new Error('the service is down');
          return { result: [{ value: 7 }], metadata: {} };
        },
      },
      queries: {
        total: { query: { graph_type: 'Single Value', start: '1 day ago', end: 'now' } },
        brief: {
          query: { graph_type: 'Bar Chart', start: '1 day ago', end: 'now', split: 'plan' },
          cacheSeconds: 1,
        },
        series: {
          query: { graph_type: 'Single Line', start: '1 day ago', end: 'now', time_bucket: 'hour' },
        },
      },
      store,
      rateLimit: { perId: RATE, perIp: { perSecond: 10_000, burst: 10_000 } },
      log: (e) => logs.push(e),
    });
    edges.push(edge);
    served.push(await serveEdge(edge, { port: 0, hostname: '127.0.0.1' }));
  }
}, 20_000);

afterAll(async () => {
  await Promise.all(served.map((s) => s.close()));
  await Promise.all(stores.map((s) => s.close()));
  await redis?.stop();
  edges = [];
});

const get = (url: string, id: string) =>
  fetch(`${url}/api/data`, {
    headers: { authorization: `Bearer ${id}` },
    signal: AbortSignal.timeout(5000),
  });

describe('the Redis store shared by three edges', () => {
  it('the same chart asked on three edges at once costs one backend query per freshness window', async () => {
    const { id } = await (edges[2] as Edge).signQueryId({ query: 'series', public: true });
    const first = await Promise.all(served.map((s) => get(s.url, id)));
    expect(first.map((r) => r.status)).toEqual([200, 200, 200]);
    const bodies = await Promise.all(first.map((r) => r.text()));
    expect(new Set(bodies).size).toBe(1);
    const again = await Promise.all(served.map((s) => get(s.url, id)));
    expect(again.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(calls.get('Single Line')).toBe(1);
  });

  it('stale-if-error still answers on every edge when the backend fails after the window', async () => {
    const { id } = await (edges[0] as Edge).signQueryId({ query: 'brief', public: true });
    const first = await Promise.all(served.map((s) => get(s.url, id)));
    expect(first.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(calls.get('Bar Chart')).toBe(1);
    await new Promise((r) => setTimeout(r, 1100));
    failing = true;
    try {
      const later = await Promise.all(served.map((s) => get(s.url, id)));
      expect(later.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(logs.filter((e) => e.event === 'data.stale').length).toBe(3);
    } finally {
      failing = false;
    }
  });

  it('a per-id limit holds across the three at its configured rate', async () => {
    const { id } = await (edges[0] as Edge).signQueryId({ query: 'total', public: true });
    const started = performance.now();
    let allowed = 0;
    let refused = 0;
    // The limiter judges each request as it arrives, somewhere between its batch's send and its
    // answer: the first judgement falls before the first batch's answers came back, the last one
    // after the last batch was sent, so the tokens the three may hand out lie between the refill
    // over those two spans (however slow a busy machine makes the answers).
    let firstAnswered = 0;
    let lastSent = started;
    while (performance.now() - started < 2000) {
      lastSent = performance.now();
      const statuses = await Promise.all(
        // Ten at a time on each: the first batch alone passes the burst, however slow the machine.
        served.flatMap((s) =>
          Array.from({ length: 10 }, () => get(s.url, id).then((r) => r.status)),
        ),
      );
      firstAnswered ||= performance.now();
      for (const status of statuses) {
        if (status === 200) allowed++;
        else if (status === 429) refused++;
        else throw new Error(`unexpected ${status}`);
      }
    }
    const ended = performance.now();
    const tokens = (ms: number) => RATE.burst + (RATE.perSecond * Math.max(ms, 0)) / 1000;
    expect(refused).toBeGreaterThan(0);
    // One token of slack each way for the bucket's rounding; three unshared limits would allow
    // about three times the upper bound.
    expect(allowed).toBeGreaterThanOrEqual(Math.floor(tokens(lastSent - firstAnswered)) - 1);
    expect(allowed).toBeLessThanOrEqual(Math.ceil(tokens(ended - started)) + 1);
  }, 15_000);

  it('a fast limit is leased: one round trip per lease, and the three never admit more than the limit', async () => {
    const rule = { perSecond: 1000, burst: 1000 };
    const client = createClient({ url: redis.url });
    await client.connect();
    // Every command Redis runs, in order: the stores run other scripts too (each second they
    // flush the views they counted), so the lease's trips are the EVALs of its own key.
    const monitor = createClient({ url: redis.url });
    await monitor.connect();
    const ran: string[] = [];
    await monitor.monitor((line) => ran.push(line));
    try {
      // A lease is a hundredth of a second's allowance: ten takes on each store, one trip each.
      for (const store of stores) {
        for (let i = 0; i < 10; i++) {
          expect((await store.rateLimits.take('leased', rule, Date.now())).allowed).toBe(true);
        }
      }
      // A command sent after the takes shows the monitor has seen every one before it.
      await client.get('after-the-leases');
      for (let waited = 0; !ran.some((line) => line.includes('after-the-leases')); waited += 5) {
        if (waited > 5000) throw new Error('the monitor never saw the marker');
        await new Promise((r) => setTimeout(r, 5));
      }
      const trips = ran.filter((line) => /"eval"/i.test(line) && line.includes('rl:leased"'));
      expect(trips).toHaveLength(3);

      const started = performance.now();
      let allowed = 0;
      let asked = 0;
      while (performance.now() - started < 1500) {
        const decisions = await Promise.all(
          stores.flatMap((store) =>
            Array.from({ length: 20 }, () => store.rateLimits.take('flood', rule, Date.now())),
          ),
        );
        asked += decisions.length;
        allowed += decisions.filter((d) => d.allowed).length;
      }
      const expected = rule.burst + (rule.perSecond * (performance.now() - started)) / 1000;
      expect(asked).toBeGreaterThan(allowed);
      expect(allowed).toBeLessThanOrEqual(Math.ceil(expected));
      expect(allowed).toBeGreaterThan(expected * 0.9);
    } finally {
      await client.quit();
      monitor.destroy();
    }
  }, 15_000);

  it('a Redis that stops answering: no request waits past the timeout, checks fail closed, then recover', async () => {
    const { id } = await (edges[1] as Edge).signQueryId({ query: 'total', public: true });
    await new Promise((r) => setTimeout(r, 1100)); // the limit above refills
    for (const s of served) expect((await get(s.url, id)).status).toBe(200);
    redis.pause();
    try {
      const statuses: number[] = [];
      const until = performance.now() + 1800;
      while (performance.now() < until) {
        for (const s of served) {
          const t = performance.now();
          const res = await get(s.url, id);
          // Two rate-limit buckets at 250 ms each at most; the revocation check never waits.
          expect(performance.now() - t).toBeLessThan(700);
          statuses.push(res.status);
        }
      }
      expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
      expect(statuses.slice(-3)).toEqual([503, 503, 503]);
      expect(logs.some((e) => e.event === 'store.unavailable' && e.level === 'error')).toBe(true);
      expect(logs.some((e) => e.event === 'store.limits_local')).toBe(true);
    } finally {
      redis.resume();
    }
    const t = performance.now();
    for (const s of served) {
      for (;;) {
        if ((await get(s.url, id)).status === 200) break;
        expect(performance.now() - t).toBeLessThan(3000);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }, 15_000);
});
