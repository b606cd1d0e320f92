/**
 * Item 2: the edge process under a bounded autocannon run (loopback) of cached and never-cached
 * charts, with ingest into the engine process at the same time: no errors, p99 recorded, RSS
 * stable after the warm-up.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ServerProcess } from '../src/child-process.ts';
import { reportFigures } from '../src/figures.ts';
import { type LoadOutcome, rssGrowth, runLoad } from '../src/load-run.ts';
import { budget } from '../src/profile.ts';
import {
  type EdgeSecrets,
  type EngineUnderTest,
  newEdgeSecrets,
  startEdge,
  startSeededEngine,
} from '../src/system-under-test.ts';

const { warmupSeconds, soakSeconds, rssWindowSeconds } = budget();
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

test(`${warmupSeconds + soakSeconds} s of mixed chart requests and ingest: no errors, RSS stable`, async () => {
  const outcome: LoadOutcome = await runLoad({
    edge,
    engine,
    secrets,
    seconds: warmupSeconds + soakSeconds,
  });
  const edgeMemory = rssGrowth(outcome.edgeRss, warmupSeconds, rssWindowSeconds);
  const engineMemory = rssGrowth(outcome.engineRss, warmupSeconds, rssWindowSeconds);
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
      ['RSS samples (1 per second)', edgeMemory.samples],
    ],
    { outcome: { ...outcome, edgeRss: undefined, engineRss: undefined }, edgeMemory, engineMemory },
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
  expect(edgeMemory.growth).toBeLessThan(0.1);
  expect(edge.output()).not.toContain(engine.apiKey);
});
