/**
 * Item 2: the edge process under a bounded autocannon run (loopback) of cached and never-cached
 * charts, with ingest into the engine process at the same time: no errors, p99 recorded, memory
 * stable after the warm-up. What the edge holds after a full collection (probed every 2 s) must
 * not grow in either profile; RSS is judged over the full profile's 5-minute soak, as the item
 * asks: over the fast profile's 12 s it mostly shows V8 still sizing its heap (+22% in one CI run,
 * while the live heap moved within ±2% in every run measured).
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ServerProcess } from '../src/child-process.ts';
import { reportFigures } from '../src/figures.ts';
import { heapGrowth, type LoadOutcome, rssGrowth, runLoad } from '../src/load-run.ts';
import { budget } from '../src/profile.ts';
import {
  type EdgeSecrets,
  type EngineUnderTest,
  newEdgeSecrets,
  startEdge,
  startSeededEngine,
} from '../src/system-under-test.ts';

const { name: profile, warmupSeconds, soakSeconds, memoryWindowSeconds } = budget();
let engine: EngineUnderTest;
let edge: ServerProcess;
let secrets: EdgeSecrets;

beforeAll(async () => {
  engine = await startSeededEngine(3000);
  secrets = newEdgeSecrets();
  // Limits off: one client address sends everything here, and the point is throughput, not the
  // token buckets (which answer 429 by design; the edge's own tests cover them).
  edge = await startEdge(secrets, engine, {
    settings: { rateLimit: { perId: false, perIp: false } },
  });
});

afterAll(async () => {
  await edge?.stop();
  await engine?.close();
});

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

test(`${warmupSeconds + soakSeconds} s of mixed chart requests and ingest: no errors, memory stable`, async () => {
  const outcome: LoadOutcome = await runLoad({
    edge,
    engine,
    secrets,
    seconds: warmupSeconds + soakSeconds,
    heapFromSeconds: warmupSeconds,
    heapEverySeconds: 2,
  });
  const edgeMemory = rssGrowth(outcome.edgeRss, warmupSeconds, memoryWindowSeconds);
  const engineMemory = rssGrowth(outcome.engineRss, warmupSeconds, memoryWindowSeconds);
  const edgeHeld = heapGrowth(outcome.edgeHeap, warmupSeconds, memoryWindowSeconds);
  reportFigures(
    'load',
    `Load: autocannon on the edge's data route, ${outcome.connections} connections, ${outcome.durationSeconds.toFixed(0)} s (${warmupSeconds} s warm-up + ${soakSeconds} s soak)`,
    ['figure', 'value'],
    [
      [
        'request mix (cached / never cached) per cycle',
        `${outcome.requestMix.cached} / ${outcome.requestMix.live}`,
      ],
      ['chart requests', outcome.requests],
      ['chart requests per second (mean)', Math.round(outcome.requestsPerSecond)],
      [
        'latency p50 / p90 / p99 / max (ms)',
        `${outcome.latencyMs.p50} / ${outcome.latencyMs.p90} / ${outcome.latencyMs.p99} / ${outcome.latencyMs.max}`,
      ],
      ['status codes', JSON.stringify(outcome.statusCodes)],
      [
        'non-2xx / errors / time-outs',
        `${outcome.non2xx} / ${outcome.errors} / ${outcome.timeouts}`,
      ],
      [
        'ingest meanwhile: bulk-log requests acknowledged',
        `${outcome.ingest.acknowledged} of ${outcome.ingest.requests} (${outcome.ingest.events} events)`,
      ],
      [
        'edge RSS after warm-up → end (MB)',
        `${mb(edgeMemory.baseline)} → ${mb(edgeMemory.final)} (${(edgeMemory.growth * 100).toFixed(1)}%), peak ${mb(edgeMemory.peak)}`,
      ],
      [
        'engine RSS after warm-up → end (MB)',
        `${mb(engineMemory.baseline)} → ${mb(engineMemory.final)} (${(engineMemory.growth * 100).toFixed(1)}%), peak ${mb(engineMemory.peak)}`,
      ],
      [
        'edge heap + Buffers after a full collection, after warm-up → end (MB)',
        `${mb(edgeHeld.baseline)} → ${mb(edgeHeld.final)} (${(edgeHeld.growth * 100).toFixed(1)}%), highest ${mb(edgeHeld.peak)}`,
      ],
      [
        'samples: RSS (1 per second) / heap probes (1 per 2 s)',
        `${edgeMemory.samples} / ${edgeHeld.samples}`,
      ],
    ],
    {
      outcome: { ...outcome, edgeRss: undefined, engineRss: undefined, edgeHeap: undefined },
      edgeMemory,
      engineMemory,
      edgeHeld,
    },
  );

  expect(outcome.requests).toBeGreaterThan(0);
  expect(outcome.statusCodes).toEqual({ '200': outcome.requests });
  expect(outcome.non2xx).toBe(0);
  expect(outcome.errors).toBe(0);
  expect(outcome.timeouts).toBe(0);
  expect(outcome.ingest.failures).toEqual([]);
  expect(outcome.ingest.acknowledged).toBeGreaterThan(0);
  expect(Number.isFinite(outcome.latencyMs.p99)).toBe(true);
  expect(edgeMemory.samples).toBeGreaterThanOrEqual(warmupSeconds + soakSeconds);
  expect(edgeHeld.samples).toBeGreaterThanOrEqual(Math.floor(soakSeconds / 2));
  expect(edgeHeld.growth).toBeLessThan(0.1);
  if (profile === 'full') expect(edgeMemory.growth).toBeLessThan(0.1);
  expect(edge.output()).not.toContain(engine.apiKey);
});
