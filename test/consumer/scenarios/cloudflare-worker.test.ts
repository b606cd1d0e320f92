/**
 * The edge as a Cloudflare Worker built the way a user deploys it: `wrangler deploy --dry-run`
 * bundles the project installed from the tarballs (wrangler's own esbuild, its Text rule for the
 * element's bundle), and the output runs under workerd (miniflare) in front of the engine.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { countSignups } from '../harness/events.ts';
import { type Payload, payloadTotal } from '../harness/payload.ts';
import { pythonMintedId } from '../harness/python.ts';
import { installed } from '../harness/scratch.ts';
import { buildAndRunWorker } from '../harness/wrangler.ts';

const { engineUrl, apiKey, signingKeys, events } = inject('consumer');
let dir = '';
let mf: Miniflare | undefined;

beforeAll(async () => {
  dir = await installed('cloudflare-worker', { omitDev: true });
});
afterAll(async () => {
  await mf?.dispose();
});

describe('Cloudflare Worker', () => {
  it('bundles with wrangler deploy --dry-run and answers data under workerd', async () => {
    const built = await buildAndRunWorker(dir, {
      ANALYTICS_BASE_URL: engineUrl,
      ANALYTICS_API_KEY: apiKey,
      EDGE_SIGNING_KEYS: signingKeys,
      EDGE_ALLOWED_ORIGINS: '*',
      SESSION_SECRET: 'a-worker-session-secret-of-at-least-32-chars',
    });
    mf = built.mf;
    expect(built.outputs).toContain('worker.js');
    expect(built.outputs.find((f) => f.endsWith('-analytics-chart.js'))).toBeDefined();

    // A public id for the Worker's one query, minted the way a Python host would.
    const minted = await pythonMintedId('signups-total', signingKeys);
    const response = await mf.dispatchFetch('http://edge.test/analytics/api/data', {
      headers: { authorization: `Bearer ${minted}` },
    });
    expect(response.status).toBe(200);
    const payload = (await response.json()) as Payload;
    expect(payload.graph).toBe('Single Value');
    expect(payloadTotal(payload)).toBe(countSignups(events));

    const script = await mf.dispatchFetch('http://edge.test/analytics/analytics-chart.js');
    expect(script.status).toBe(200);
    expect(await script.text()).toBe(
      readFileSync(
        join(dir, 'node_modules/@analytics-chart/element/dist/analytics-chart.js'),
        'utf8',
      ),
    );
  });
});
