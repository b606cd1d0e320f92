/**
 * Item 3: the edge process in front of a fault-injecting service (which forwards to the real
 * engine process when healthy). Per fault: the status and code the edge documents, an answer
 * within the edge's own time budget, the number of backend calls (retried faults 1 + retries,
 * a rejected key exactly once), stale data where a cached copy exists, and recovery.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ServerProcess } from '../src/child-process.ts';
import { type Fault, type FaultService, startFaultService } from '../src/fault-service.ts';
import { type Cell, reportFigures } from '../src/figures.ts';
import { publicId } from '../src/forge-jwt.ts';
import {
  type EdgeSecrets,
  type EngineUnderTest,
  newEdgeSecrets,
  startEdge,
  startSeededEngine,
} from '../src/system-under-test.ts';

const TIMEOUT_MS = 400;
const RETRIES = 2;
/** The edge's worst case: every attempt times out, plus the longest back-offs (100·1.5, 200·1.5). */
const EDGE_BUDGET_MS = (RETRIES + 1) * TIMEOUT_MS + 150 + 300;
/** Scheduling slack on a loaded two-core machine; an edge that hangs overshoots it by far. */
const SLACK_MS = 2000;
const CACHE_TTL_SECONDS = 1;

let engine: EngineUnderTest;
let service: FaultService;
let edge: ServerProcess;
let secrets: EdgeSecrets;

beforeAll(async () => {
  engine = await startSeededEngine(2000);
  service = await startFaultService(engine.url);
  secrets = newEdgeSecrets();
  edge = await startEdge(
    secrets,
    { url: service.url, apiKey: engine.apiKey },
    {
      timeoutMs: TIMEOUT_MS,
      retries: RETRIES,
      // A short freshness so stale-if-error can be seen; per-id buckets off (one id is asked often).
      settings: {
        cache: { ttl: CACHE_TTL_SECONDS, staleIfError: '10m' },
        rateLimit: { perId: false },
      },
    },
  );
});

afterAll(async () => {
  await edge?.stop();
  await service?.close();
  await engine?.close();
});

/** One chart request through the edge, timed, with a client-side limit far past the budget. */
async function chart(tenant: string) {
  const id = publicId(secrets.key, 'public-count', { tenant });
  const started = performance.now();
  const response = await fetch(`${edge.url}/api/data`, {
    headers: { authorization: `Bearer ${id}` },
    signal: AbortSignal.timeout(EDGE_BUDGET_MS + SLACK_MS + 10_000),
  });
  const text = await response.text();
  return {
    status: response.status,
    stale: response.headers.get('x-analytics-stale'),
    body: JSON.parse(text) as { error?: string; code?: string; value?: number },
    text,
    elapsedMs: Math.round(performance.now() - started),
  };
}

/** The plain count of seeded events of a tenant (all lie inside the 30-day window). */
const expectedCount = (tenant: string) =>
  engine.events.filter((e) => e.json.tenant === tenant).length;

interface FaultCase {
  name: string;
  fault: Fault;
  status: number;
  code?: string;
  /** Backend calls one viewer request causes. */
  calls: number;
}

const retried = RETRIES + 1;
const CASES: FaultCase[] = [
  {
    name: 'slow, under the time-out (150 ms)',
    fault: { kind: 'slow', ms: 150 },
    status: 200,
    calls: 1,
  },
  {
    name: 'slow, past the time-out (1.5 s)',
    fault: { kind: 'slow', ms: 1500 },
    status: 504,
    code: 'timeout',
    calls: retried,
  },
  { name: 'hangs', fault: { kind: 'hang' }, status: 504, code: 'timeout', calls: retried },
  {
    name: '500 {error}',
    fault: { kind: 'status', status: 500, body: { error: 'internal error' } },
    status: 502,
    code: 'backend',
    calls: retried,
  },
  {
    name: '503 {error}',
    fault: { kind: 'status', status: 503, body: { error: 'overloaded' } },
    status: 502,
    code: 'backend',
    calls: retried,
  },
  {
    name: '504 {error} (its own time-out)',
    fault: { kind: 'status', status: 504, body: { error: 'query timed out' } },
    status: 504,
    code: 'timeout',
    calls: retried,
  },
  {
    name: '502 HTML page (a proxy)',
    fault: { kind: 'html', status: 502 },
    status: 502,
    code: 'backend',
    calls: retried,
  },
  {
    name: '200 with malformed JSON',
    fault: { kind: 'malformed' },
    status: 502,
    code: 'backend',
    calls: 1,
  },
  {
    name: 'closes the connection before answering',
    fault: { kind: 'close' },
    status: 502,
    code: 'backend',
    calls: retried,
  },
  {
    name: 'closes the connection mid-response',
    fault: { kind: 'close-mid-response' },
    status: 502,
    code: 'backend',
    calls: retried,
  },
  {
    name: '400 {"error":"Invalid API KEY"}',
    fault: { kind: 'status', status: 400, body: { error: 'Invalid API KEY' } },
    status: 502,
    code: 'backend',
    calls: 1,
  },
  {
    name: '401 {"error":"Invalid API KEY"}',
    fault: { kind: 'status', status: 401, body: { error: 'Invalid API KEY' } },
    status: 502,
    code: 'backend',
    calls: 1,
  },
  {
    name: '500 {"error":"Invalid API KEY"}',
    fault: { kind: 'status', status: 500, body: { error: 'Invalid API KEY' } },
    status: 502,
    code: 'backend',
    calls: 1,
  },
  {
    name: '400 another refusal',
    fault: { kind: 'status', status: 400, body: { error: 'start: could not parse' } },
    status: 502,
    code: 'backend',
    calls: 1,
  },
  { name: '302 redirect', fault: { kind: 'redirect' }, status: 502, code: 'backend', calls: 1 },
];

const rows: Cell[][] = [];

describe('each fault, on a chart with no cached copy', () => {
  CASES.forEach((c, i) => {
    test(c.name, async () => {
      const tenant = `fault-${i}`;
      service.set(c.fault);
      const before = service.calls.length;
      const answer = await chart(tenant);
      const calls = service.calls.length - before;
      service.set({ kind: 'ok' });
      const recovered = await chart(tenant);
      rows.push([
        c.name,
        c.status,
        answer.status,
        answer.body.code ?? '',
        calls,
        c.calls,
        answer.elapsedMs,
        recovered.status,
      ]);

      expect(answer.status).toBe(c.status);
      if (c.code) expect(answer.body).toEqual({ error: expect.any(String), code: c.code });
      else expect(answer.body.value).toBe(0);
      expect(calls).toBe(c.calls);
      expect(answer.elapsedMs).toBeLessThan(EDGE_BUDGET_MS + SLACK_MS);
      expect(answer.text).not.toContain(engine.apiKey);
      // Recovery: the same chart answers from the healthy backend at once.
      expect(recovered.status).toBe(200);
      expect(recovered.stale).toBeNull();
      expect(recovered.body.value).toBe(0);
    });
  });
});

describe('stale data and recovery', () => {
  test('every fault serves the cached copy, marked stale, once it is past its freshness', async () => {
    service.set({ kind: 'ok' });
    const faults = CASES.filter((f) => f.status !== 200);
    // One cached chart per fault (the first is a tenant with events), all primed, then all stale.
    const tenants = faults.map((_, i) => (i === 0 ? 'acme' : `stale-${i}`));
    const primed = new Map<string, number | undefined>();
    for (const tenant of tenants) {
      const fresh = await chart(tenant);
      expect(fresh.status).toBe(200);
      primed.set(tenant, fresh.body.value);
    }
    expect(primed.get('acme')).toBe(expectedCount('acme'));
    await new Promise((r) => setTimeout(r, CACHE_TTL_SECONDS * 1000 + 100));
    for (const [i, c] of faults.entries()) {
      const tenant = tenants[i] as string;
      service.set(c.fault);
      const answer = await chart(tenant);
      rows.push([
        `stale: ${c.name}`,
        200,
        answer.status,
        answer.stale === 'true' ? 'stale' : '',
        '',
        '',
        answer.elapsedMs,
        '',
      ]);
      expect(answer.status).toBe(200);
      expect(answer.stale).toBe('true');
      expect(answer.body.value).toBe(primed.get(tenant));
    }
    service.set({ kind: 'ok' });
  });

  test('a rejected key is never retried, however many viewers ask', async () => {
    service.set({ kind: 'status', status: 400, body: { error: 'Invalid API KEY' } });
    const before = service.calls.length;
    const sequential = [];
    for (let i = 0; i < 5; i++) sequential.push(await chart(`key-${i}`));
    const afterSequential = service.calls.length;
    // Ten viewers of one chart at the same moment: at most one call each (failures are not
    // cached, so a viewer arriving after a failed call makes a new one; none is ever retried).
    const concurrent = await Promise.all(Array.from({ length: 10 }, () => chart('key-shared')));
    const afterConcurrent = service.calls.length;
    service.set({ kind: 'ok' });
    rows.push([
      'Invalid API KEY: 5 charts one by one',
      502,
      sequential[0]?.status,
      'calls',
      afterSequential - before,
      5,
      '',
      '',
    ]);
    rows.push([
      'Invalid API KEY: 10 viewers of one chart at once',
      502,
      concurrent[0]?.status,
      'calls',
      afterConcurrent - afterSequential,
      '≤ 10',
      '',
      '',
    ]);
    expect(sequential.map((a) => a.status)).toEqual([502, 502, 502, 502, 502]);
    expect(concurrent.every((a) => a.status === 502)).toBe(true);
    expect(afterSequential - before).toBe(5);
    expect(afterConcurrent - afterSequential).toBeGreaterThanOrEqual(1);
    expect(afterConcurrent - afterSequential).toBeLessThanOrEqual(10);
    expect(edge.output()).toContain('backend.key_rejected');
  });

  test('the service down (connection refused), then back: 502, then fresh data', async () => {
    await new Promise((r) => setTimeout(r, CACHE_TTL_SECONDS * 1000 + 100));
    await service.down();
    const down = await chart('globex');
    const downStale = await chart('acme');
    await service.up();
    service.set({ kind: 'ok' });
    await new Promise((r) => setTimeout(r, CACHE_TTL_SECONDS * 1000 + 100));
    const back = await chart('globex');
    const backAcme = await chart('acme');
    rows.push([
      'down (nothing listening), uncached chart',
      502,
      down.status,
      down.body.code ?? '',
      '',
      '',
      down.elapsedMs,
      back.status,
    ]);
    rows.push([
      'down (nothing listening), cached chart',
      200,
      downStale.status,
      downStale.stale === 'true' ? 'stale' : '',
      '',
      '',
      downStale.elapsedMs,
      backAcme.status,
    ]);
    expect(down.status).toBe(502);
    expect(down.body.code).toBe('backend');
    expect(downStale.status).toBe(200);
    expect(downStale.stale).toBe('true');
    expect(back.status).toBe(200);
    expect(back.body.value).toBe(expectedCount('globex'));
    expect(backAcme.status).toBe(200);
    expect(backAcme.stale).toBeNull();
  });

  test('the key travelled only in request bodies, and never into the edge output', () => {
    expect(service.calls.length).toBeGreaterThan(0);
    for (const call of service.calls) {
      expect(call.apiKey).toBe(engine.apiKey);
      expect(call.url).not.toContain(engine.apiKey);
      expect(call.headerText).not.toContain(engine.apiKey);
    }
    expect(edge.output()).not.toContain(engine.apiKey);
    expect(edge.output()).not.toContain(secrets.key.secret);
  });
});

afterAll(() => {
  reportFigures(
    'backend-faults',
    `Backend faults: edge (time-out ${TIMEOUT_MS} ms × ${RETRIES + 1} attempts, budget ${EDGE_BUDGET_MS} ms) in front of a fault-injecting service`,
    [
      'backend behaviour',
      'expected',
      'status',
      'code',
      'calls',
      'expected calls',
      'ms',
      'then healthy',
    ],
    rows,
  );
});
