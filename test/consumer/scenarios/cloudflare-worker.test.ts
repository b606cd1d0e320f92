/**
 * The edge as a Cloudflare Worker built the way a user deploys it: `wrangler deploy --dry-run`
 * bundles the project installed from the tarballs (wrangler's own esbuild, its Text rule for the
 * element's bundle), and the output runs under workerd (miniflare) in front of the engine.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { countSignups } from '../harness/events.ts';
import { type Payload, payloadTotal } from '../harness/payload.ts';
import { runOk } from '../harness/processes.ts';
import { pythonMintedId } from '../harness/python.ts';
import { installed } from '../harness/scratch.ts';

const { root, engineUrl, apiKey, signingKeys, events } = inject('consumer');
// wrangler from npm, pinned in this package's devDependencies (the fixture lists it for users).
const WRANGLER = fileURLToPath(new URL('../node_modules/.bin/wrangler', import.meta.url));
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
    await runOk(WRANGLER, ['deploy', '--dry-run', '--outdir', 'dist'], {
      cwd: dir,
      env: { WRANGLER_SEND_METRICS: 'false', XDG_CONFIG_HOME: join(root, '.config'), CI: '1' },
    });
    const outputs = readdirSync(join(dir, 'dist'));
    expect(outputs).toContain('worker.js');
    const bundleModule = outputs.find((f) => f.endsWith('-analytics-chart.js'));
    expect(bundleModule).toBeDefined();

    mf = new Miniflare({
      modules: true,
      scriptPath: join(dir, 'dist/worker.js'),
      modulesRoot: join(dir, 'dist'),
      modulesRules: [{ type: 'Text', include: ['**/*-analytics-chart.js'] }],
      compatibilityDate: '2025-01-01',
      durableObjects: { EDGE_RATE_LIMITER: 'RateLimiterObject' },
      bindings: {
        ANALYTICS_BASE_URL: engineUrl,
        ANALYTICS_API_KEY: apiKey,
        EDGE_SIGNING_KEYS: signingKeys,
        EDGE_ALLOWED_ORIGINS: '*',
        SESSION_SECRET: 'a-worker-session-secret-of-at-least-32-chars',
      },
    });
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
