/**
 * The window a chart answer covers is resolved once per request, from the request's clock: the
 * backend is sent that window as Unix seconds, and the answer's `range` and `incomplete` describe
 * it, however long the backend takes. Here the clock jumps two minutes while the engine runs, so
 * anything reading the time again (the engine resolving `now`, the edge after the answer) would
 * land in other minute buckets.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type ServedEdge, serveEdge } from '../src/adapter/node/serve-edge.ts';
import { engineBackend } from '../src/backend/engine-backend.ts';
import { pinWindow } from '../src/backend/load-result.ts';
import { createEdge } from '../src/create-edge.ts';
import { compileDefinition } from '../src/registry/compile-definition.ts';
import { resolveQuery } from '../src/registry/resolve-query.ts';
import { generateSigningKey } from '../src/tokens/signing-keys.ts';
import { type AnalyticsBackend, startAnalyticsBackend } from './support/analytics-backend.ts';

const API_KEY = 'data-window-key-0123456789';
const TENANT = 'one-clock';

let backend: AnalyticsBackend;
let served: ServedEdge | undefined;

beforeAll(async () => {
  backend = await startAnalyticsBackend(API_KEY);
}, 60_000);

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  await served?.close();
  await backend.close();
});

async function ingest(timestamps: number[]): Promise<void> {
  for (const timestamp of timestamps) {
    const response = await fetch(`${backend.url}/api/bulk-log`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        api_key: API_KEY,
        timestamp,
        jsons: [JSON.stringify({ tenant: TENANT })],
      }),
    });
    expect(response.status, await response.text()).toBeLessThan(300);
  }
}

describe('one clock per data request', () => {
  it('sends the window it resolved and answers range and incomplete from that same window', async () => {
    // 30.4 s before a minute boundary, within a minute of the real time (the id stays valid).
    const boundary = (Math.floor(Date.now() / 60_000) + 1) * 60_000;
    const startMs = boundary - 30_400;
    const now = Math.ceil(startMs / 1000); // whole seconds, rounded up: boundary/1000 - 30
    const hour = { start: now - 3600, end: now };
    // In the window: its first and last second. Outside: its end, and a minute later (inside the
    // window a clock read after the jump would give).
    await ingest([hour.start + 1, now - 1, now - 1, now, now + 60]);

    let clock = startMs;
    const sent: Record<string, unknown>[] = [];
    const engine = {
      async query(body: unknown) {
        sent.push(body as Record<string, unknown>);
        clock = startMs + 120_000;
        return backend.engine.query(body);
      },
    };
    const edge = createEdge({
      signingKeys: [generateSigningKey()],
      backend: engineBackend(engine, { apiKey: API_KEY }),
      queries: {
        minutes: {
          query: {
            graph_type: 'Single Line',
            IANA_time_zone: 'UTC',
            start: '1 hour ago',
            end: 'now',
            granularity: 'Minute',
            filters: [['tenant', '=', TENANT]],
          },
        },
      },
      log: () => {},
    });
    served = await serveEdge(edge, { port: 0 });
    const { id } = await edge.signQueryId({ query: 'minutes', public: true });

    vi.spyOn(Date, 'now').mockImplementation(() => clock);
    const response = await fetch(`${served.url}/api/data`, {
      headers: { authorization: `Bearer ${id}` },
    });
    vi.restoreAllMocks();

    expect(response.status).toBe(200);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ start: hour.start, end: hour.end });
    const payload = (await response.json()) as {
      range: { start: number; end: number };
      incomplete?: { first: boolean; last: boolean };
      labels: string[];
      series: { values: number[] }[];
      combined: number;
    };
    expect(payload.range).toEqual(hour);
    // Neither end of [boundary - 3630 s, boundary - 30 s] falls on a minute.
    expect(payload.incomplete).toEqual({ first: true, last: true });
    expect(payload.combined).toBe(3);
    const values = payload.series[0]?.values ?? [];
    // Minute buckets from the one holding the window's start to the one before the boundary.
    const minute = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
    expect(payload.labels).toHaveLength(61);
    expect(payload.labels[0]).toBe(minute(boundary - 3_660_000));
    expect(payload.labels.at(-1)).toBe(minute(boundary - 60_000));
    expect(values[0]).toBe(1);
    expect(values.at(-1)).toBe(2);
  });
});

describe('the body the backend is sent', () => {
  const resolved = (query: Record<string, unknown>) => {
    const outcome = resolveQuery(compileDefinition({ query }, undefined), {}, undefined);
    if (!outcome.ok) throw new Error(outcome.error);
    return outcome.value;
  };
  // 2023-11-14T22:13:20.250Z: a clock reading a quarter second past a whole second.
  const nowMs = 1_700_000_000_250;

  it('pins relative times to the whole second after the clock, and keeps absolute ones', () => {
    const query = resolved({
      graph_type: 'Single Value',
      IANA_time_zone: 'UTC',
      start: '2023-11-01T00:00:00Z',
      end: 'now',
    });
    expect(pinWindow(query, nowMs)).toEqual({
      body: { ...query.body, start: '2023-11-01T00:00:00Z', end: 1_700_000_001 },
      window: { start: 1_698_796_800, end: 1_700_000_001 },
    });
    const hour = resolved({ graph_type: 'Single Value', start: '1 hour ago', end: 'now' });
    expect(pinWindow(hour, nowMs).body).toMatchObject({
      start: 1_700_000_001 - 3600,
      end: 1_700_000_001,
    });
  });

  it('sends SQL queries and windows that do not resolve as written, with no window', () => {
    const sql = resolved({ graph_type: 'Table', sql_query: 'SELECT 1 AS n' });
    expect(pinWindow(sql, nowMs)).toEqual({ body: sql.body, window: undefined });
    const backwards = resolved({ graph_type: 'Single Value', start: 'now', end: '1 hour ago' });
    expect(pinWindow(backwards, nowMs)).toEqual({ body: backwards.body, window: undefined });
  });
});
