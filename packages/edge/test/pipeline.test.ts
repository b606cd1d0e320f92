/**
 * The step runner stays synchronous until a step has to wait, and so does the data route for a
 * remembered public id with a fresh cached result: that is the hot path the edge bench measures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineBackend } from '../src/backend/engine-backend.ts';
import { createEdge } from '../src/create-edge.ts';
import { pipeline, type Step } from '../src/http/pipeline.ts';
import { generateSigningKey } from '../src/tokens/signing-keys.ts';
import { type AnalyticsBackend, startAnalyticsBackend } from './support/analytics-backend.ts';

describe('pipeline', () => {
  const record =
    (name: string, wait = false): Step<string[]> =>
    (seen) => {
      seen.push(name);
      return wait ? Promise.resolve() : undefined;
    };

  it('runs every step in order and answers synchronously when none waits', () => {
    const run = pipeline([record('a'), record('b'), record('c')], (seen) => seen.join(''));
    expect(run([])).toBe('abc');
  });

  it('resumes after a waiting step with the next one, once', async () => {
    const run = pipeline([record('a'), record('b', true), record('c')], (seen) => seen.join(''));
    const answer = run([]);
    expect(answer).toBeInstanceOf(Promise);
    expect(await answer).toBe('abc');
  });

  it('stops at a refusal, thrown or rejected, before any later step', async () => {
    const refuse: Step<string[]> = () => {
      throw new Error('refused');
    };
    const seen: string[] = [];
    expect(() => pipeline([record('a'), refuse, record('c')], () => 'x')(seen)).toThrow('refused');
    expect(seen).toEqual(['a']);
    const late: string[] = [];
    const rejecting: Step<string[]> = () => Promise.reject(new Error('late'));
    await expect(pipeline([rejecting, record('c')], () => 'x')(late)).rejects.toThrow('late');
    expect(late).toEqual([]);
  });
});

describe('the data route', () => {
  const API_KEY = 'pipeline-key-0123456789';
  let backend: AnalyticsBackend;
  beforeAll(async () => {
    backend = await startAnalyticsBackend(API_KEY);
  }, 60_000);
  afterAll(() => backend.close());

  it('answers a remembered public id from a fresh cached result without a promise', async () => {
    const calls: unknown[] = [];
    const engine = {
      query: (body: unknown) => {
        calls.push(body);
        return backend.engine.query(body);
      },
    };
    const edge = createEdge({
      signingKeys: [generateSigningKey()],
      backend: engineBackend(engine, { apiKey: API_KEY }),
      queries: {
        total: { query: { graph_type: 'Single Value', start: '30 days ago', end: 'now' } },
      },
      log: () => {},
    });
    const { id } = await edge.signQueryId({ query: 'total', public: true });
    const request = () =>
      new Request('http://edge.test/api/data', { headers: { authorization: `Bearer ${id}` } });
    const first = await edge.app.fetch(request());
    expect(first.status).toBe(200);
    const again = edge.app.fetch(request());
    expect(again).toBeInstanceOf(Response);
    expect((again as Response).status).toBe(200);
    expect(await (again as Response).json()).toMatchObject({
      graph: 'Single Value',
      value: backend.events.filter((e) => e.timestamp > Date.now() / 1000 - 30 * 86_400).length,
    });
    expect(calls).toHaveLength(1);
  });
});
