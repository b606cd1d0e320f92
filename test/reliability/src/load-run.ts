/**
 * Item 2, load: autocannon on loopback against the edge process's data route with a mix of
 * cached charts (public and session-bound ids, several tenants and viewer ranges) and a chart
 * that is never cached (`cacheSeconds: 0`, every request reaches the engine), while another loop
 * ingests into the engine. The edge's and the engine's RSS are sampled every second.
 */
import autocannon from 'autocannon';
import type { ServerProcess } from './child-process.ts';
import { publicId, sessionCookie, sessionId } from './forge-jwt.ts';
import { type HeapFigures, heapAfterGc } from './heap-probe.ts';
import { postJson } from './post-json.ts';
import { type RssSample, sampleRss } from './rss-sampler.ts';
import { TAGS, TENANTS } from './seed-events.ts';
import type { EdgeSecrets, EngineUnderTest } from './system-under-test.ts';

/** One request autocannon cycles through. */
interface LoadRequest {
  method: 'GET';
  path: string;
  headers: Record<string, string>;
  /** cached: answered from the edge's result cache after the first call; live: never cached. */
  kind: 'cached' | 'live';
}

/** The mix: every tenant, public and session-bound ids, with and without a viewer range. */
export function loadRequests(secrets: EdgeSecrets): LoadRequest[] {
  const requests: LoadRequest[] = [];
  for (const tenant of TENANTS) {
    const bearer = (id: string) => ({ authorization: `Bearer ${id}` });
    requests.push({
      method: 'GET',
      path: '/api/data',
      headers: bearer(publicId(secrets.key, 'public-count', { tenant })),
      kind: 'cached',
    });
    const daily = bearer(publicId(secrets.key, 'public-daily', { tenant }));
    for (const range of ['', '?range=24h', '?range=7d', '?range=30d']) {
      requests.push({ method: 'GET', path: `/api/data${range}`, headers: daily, kind: 'cached' });
    }
    requests.push({
      method: 'GET',
      path: '/api/data',
      headers: bearer(publicId(secrets.key, 'public-live', { tenant })),
      kind: 'live',
    });
    const user = `user-${tenant}`;
    const cookie = sessionCookie(secrets.sessionSecret, user, tenant);
    for (const [q, range] of [
      ['daily', '?range=24h'],
      ['daily', ''],
      ['by-tag', ''],
      ['recent', ''],
    ] as const) {
      requests.push({
        method: 'GET',
        path: `/api/data${range}`,
        headers: { ...bearer(sessionId(secrets.key, q, user, { tenant })), cookie },
        kind: 'cached',
      });
    }
  }
  return requests;
}

/** What a load run measured. */
export interface LoadOutcome {
  durationSeconds: number;
  connections: number;
  requestMix: { cached: number; live: number };
  requests: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  ingest: { requests: number; acknowledged: number; events: number; failures: string[] };
  edgeRss: RssSample[];
  engineRss: RssSample[];
  /** The edge's heap after a forced full collection, every `heapEverySeconds` of the soak. */
  edgeHeap: HeapSample[];
}

/** One heap probe: milliseconds since the run began, and what the process held. */
export interface HeapSample extends HeapFigures {
  atMs: number;
}

/** Options of a load run. */
export interface LoadOptions {
  edge: ServerProcess;
  engine: EngineUnderTest;
  secrets: EdgeSecrets;
  seconds: number;
  connections?: number;
  /** Bulk-log requests per second to the engine meanwhile. @default 10 */
  ingestPerSecond?: number;
  /** Probe the edge's heap from this second on (the end of the warm-up). @default 0 */
  heapFromSeconds?: number;
  /** Seconds between heap probes. @default 2 */
  heapEverySeconds?: number;
}

/** Runs autocannon and the ingest loop for `seconds`, sampling both processes' RSS. */
export async function runLoad(options: LoadOptions): Promise<LoadOutcome> {
  const { edge, engine, secrets } = options;
  const connections = options.connections ?? 20;
  const requests = loadRequests(secrets);
  const edgeRss = sampleRss(edge.pid);
  const engineRss = sampleRss(engine.process.pid);
  const edgeHeap = probeHeap(
    edge,
    options.heapFromSeconds ?? 0,
    options.heapEverySeconds ?? 2,
    // The last probe a second before the end: still under load, like the first.
    options.seconds - 1,
  );

  const ingest = { requests: 0, acknowledged: 0, events: 0, failures: [] as string[] };
  let ingesting = true;
  const ingestLoop = (async () => {
    const every = 1000 / (options.ingestPerSecond ?? 10);
    let n = 0;
    while (ingesting) {
      const started = Date.now();
      const jsons = Array.from({ length: 50 }, (_, i) =>
        JSON.stringify({
          uid: `load-${n}-${i}`,
          tenant: TENANTS[(n + i) % TENANTS.length],
          tag: TAGS[i % TAGS.length],
          n: i,
        }),
      );
      n++;
      ingest.requests++;
      try {
        const answer = await postJson(`${engine.url}/api/bulk-log`, {
          api_key: engine.apiKey,
          jsons,
        });
        if (answer.status === 200) {
          ingest.acknowledged++;
          ingest.events += jsons.length;
        } else ingest.failures.push(`${answer.status} ${answer.text.slice(0, 100)}`);
      } catch (error) {
        ingest.failures.push(String(error));
      }
      await new Promise((r) => setTimeout(r, Math.max(0, every - (Date.now() - started))));
    }
  })();

  const result = await autocannon({
    url: edge.url,
    connections,
    duration: options.seconds,
    requests: requests.map(({ method, path, headers }) => ({ method, path, headers })),
  });
  ingesting = false;
  await ingestLoop;
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) {
    statusCodes[code] = stat.count ?? 0;
  }
  return {
    durationSeconds: result.duration,
    connections,
    requestMix: {
      cached: requests.filter((r) => r.kind === 'cached').length,
      live: requests.filter((r) => r.kind === 'live').length,
    },
    requests: result.requests.total,
    requestsPerSecond: result.requests.average,
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    ingest,
    edgeRss: edgeRss.stop(),
    engineRss: engineRss.stop(),
    edgeHeap: await edgeHeap,
  };
}

/** Probes `server`'s heap at `fromSeconds`, then every `everySeconds` up to `untilSeconds`. */
async function probeHeap(
  server: ServerProcess,
  fromSeconds: number,
  everySeconds: number,
  untilSeconds: number,
): Promise<HeapSample[]> {
  const started = Date.now();
  const samples: HeapSample[] = [];
  for (let at = fromSeconds; at <= untilSeconds; at += everySeconds) {
    await new Promise((r) => setTimeout(r, Math.max(0, started + at * 1000 - Date.now())));
    const figures = await heapAfterGc(server.child);
    samples.push({ atMs: Date.now() - started, ...figures });
  }
  return samples;
}

/**
 * Growth of a level over the soak: the lowest sample of the last `windowSeconds` against the
 * lowest of the first `windowSeconds` after the warm-up. The lowest, because under steady load a
 * Node process's memory climbs and falls by a fifth between collections (the edge's RSS 145-173
 * MB within 40 s, with no trend), so a median of a few seconds lands wherever the cycle happens
 * to be; what a leak raises is the level after collection.
 */
export function growthOver<T extends { atMs: number }>(
  samples: readonly T[],
  level: (sample: T) => number,
  warmupSeconds: number,
  windowSeconds: number,
) {
  const lowest = (some: readonly T[]) => (some.length ? Math.min(...some.map(level)) : Number.NaN);
  const after = samples.filter((s) => s.atMs >= warmupSeconds * 1000);
  const end = samples.at(-1)?.atMs ?? 0;
  const baseline = lowest(after.filter((s) => s.atMs < (warmupSeconds + windowSeconds) * 1000));
  const final = lowest(after.filter((s) => s.atMs > end - windowSeconds * 1000));
  const peak = Math.max(...samples.map(level));
  return { baseline, final, peak, growth: final / baseline - 1, samples: samples.length };
}

/** RSS growth over the soak ({@link growthOver}). */
export const rssGrowth = (
  samples: readonly RssSample[],
  warmupSeconds: number,
  windowSeconds: number,
) => growthOver(samples, (s) => s.rss, warmupSeconds, windowSeconds);

/** Growth of what the process holds after a full collection: its V8 heap and its Buffers. */
export const heapGrowth = (
  samples: readonly HeapSample[],
  warmupSeconds: number,
  windowSeconds: number,
) => growthOver(samples, (s) => s.heapUsed + s.external, warmupSeconds, windowSeconds);
