/**
 * A Node host app on Hono, as a user writes it from the edge README's quick start: installed
 * from the tarballs, compiled by `tsc --strict` (NodeNext, library checks on) and run with plain
 * `node`, with the HTTP backend to the engine installed from its tarball.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { countSignups } from '../harness/events.ts';
import { type Payload, payloadTotal } from '../harness/payload.ts';
import { runOk, type Started, startProcess } from '../harness/processes.ts';
import { readmeBlock } from '../harness/readme.ts';
import { fixturePath, installed } from '../harness/scratch.ts';
import { sessionJwt } from '../harness/session-cookie.ts';

const { engineUrl, apiKey, signingKeys, events } = inject('consumer');
const SESSION_SECRET = 'a-host-session-secret-of-at-least-32-characters';
let dir = '';
let app: Started | undefined;
let base = '';

const cookie = (sub: string, tenant: string) =>
  `session=${sessionJwt({ sub, tenant, exp: Math.floor(Date.now() / 1000) + 600 }, SESSION_SECRET)}`;

beforeAll(async () => {
  dir = await installed('node-host-app');
});
afterAll(async () => {
  await app?.stop();
});

describe('node host app', () => {
  it.each(['src/server.ts', 'src/queries.ts'])('is the edge README quick start: %s', (file) => {
    expect(readFileSync(fixturePath(`node-host-app/${file}`), 'utf8')).toBe(
      readmeBlock('edge', `node-host-app/${file}`),
    );
  });

  it('runs the protocol README quick start and prints what the README says', async () => {
    writeFileSync(join(dir, 'quick-start.mjs'), readmeBlock('protocol', 'quick-start.mjs'));
    const result = await runOk('node', ['quick-start.mjs'], {
      cwd: dir,
      env: { NODE_OPTIONS: '' },
    });
    expect(result.stdout).toBe(readmeBlock('protocol', 'quick-start.output'));
  });

  it('compiles with tsc --strict against the installed types', async () => {
    await runOk('npm', ['run', 'build'], { cwd: dir });
    expect(existsSync(join(dir, 'dist/server.js'))).toBe(true);
  });

  it('runs with plain node: signs a session-bound id and answers its data through the edge', async () => {
    app = await startProcess('node', ['dist/server.js'], {
      cwd: dir,
      env: {
        NODE_OPTIONS: '',
        PORT: '0',
        SESSION_SECRET,
        EDGE_SIGNING_KEYS: signingKeys,
        ANALYTICS_BASE_URL: engineUrl,
        ANALYTICS_API_KEY: apiKey,
      },
      ready: /host app on http:\/\/localhost:(\d+)\//,
    });
    base = `http://127.0.0.1:${app.match[1]}`;

    expect((await fetch(`${base}/dashboard`)).status).toBe(401);
    const page = await fetch(`${base}/dashboard`, { headers: { cookie: cookie('alice', 'acme') } });
    expect(page.status).toBe(200);
    const id = /query-id="([^"]+)"/.exec(await page.text())?.[1] ?? '';
    expect(id.split('.')).toHaveLength(3);

    const data = await fetch(`${base}/analytics/api/data`, {
      headers: { authorization: `Bearer ${id}`, cookie: cookie('alice', 'acme') },
    });
    expect(data.status).toBe(200);
    const payload = (await data.json()) as Payload;
    expect(payload.graph).toBe('Single Line');
    expect(payloadTotal(payload)).toBe(countSignups(events, 'acme'));
    expect(countSignups(events, 'acme')).not.toBe(countSignups(events, 'globex'));

    // The id is bound to alice: another signed-in user cannot use it.
    const stolen = await fetch(`${base}/analytics/api/data`, {
      headers: { authorization: `Bearer ${id}`, cookie: cookie('bob', 'globex') },
    });
    expect([401, 403]).toContain(stolen.status);
    expect(await stolen.text()).not.toContain(apiKey);
  });

  it('serves the element bundle it found in node_modules, without a start-up warning', async () => {
    const served = await fetch(`${base}/analytics/analytics-chart.js`);
    expect(served.status).toBe(200);
    const installedBundle = readFileSync(
      join(dir, 'node_modules/@analytics-chart/element/dist/analytics-chart.js'),
      'utf8',
    );
    expect(await served.text()).toBe(installedBundle);
    expect(app?.output()).not.toContain('bundle.missing');
  });
});
