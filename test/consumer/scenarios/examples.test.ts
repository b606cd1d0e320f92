/**
 * The repository's examples as users take them: each folder copied out of the workspace, its
 * `@analytics-chart/*` ranges pointed at the packed tarballs, installed with npm and run the way
 * its README says. The host app runs its README's block line by line (demo data, a signing key,
 * `npm start`) and serves a signed-in dashboard whose every chart answers, and typechecks
 * outside the workspace. The plain page and the CMS article, copied out, get their ids from that
 * host app's CLI as their READMEs say and draw every chart in Chromium from another origin. The
 * Worker builds with wrangler and answers its registry's charts under workerd, in front of an
 * engine of its own holding the suite's events.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Miniflare } from 'miniflare';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CHROME_PATH, CHROMIUM_ARGS } from '../../../scripts/chromium.mjs';
import type { Payload } from '../harness/payload.ts';
import { runOk, type Started, startProcess } from '../harness/processes.ts';
import { readmeBlocksAt, shellLine } from '../harness/readme.ts';
import { examplePath, installedExample } from '../harness/scratch.ts';
import { sessionJwt } from '../harness/session-cookie.ts';
import { staticServer } from '../harness/static-server.ts';
import { buildAndRunWorker } from '../harness/wrangler.ts';

/** The element's state, as the page reads it. */
interface Chart {
  status: string;
}

const { root, signingKeys, events } = inject('consumer');
const DAY = 86_400;

/** The installed element's bundle: what every edge must serve byte for byte. */
function installedBundle(dir: string): string {
  return readFileSync(
    join(dir, 'node_modules/@analytics-chart/element/dist/analytics-chart.js'),
    'utf8',
  );
}

describe('examples/host-app, copied out', () => {
  let dir = '';
  let app: Started | undefined;
  let origin = '';
  let keys = '';
  let browser: Browser | undefined;

  beforeAll(async () => {
    dir = await installedExample('host-app');
  });
  afterAll(async () => {
    await browser?.close();
    await app?.stop();
  });

  async function signIn(login: string): Promise<string> {
    const response = await fetch(`${origin}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ login, password: 'demo-password' }).toString(),
    });
    expect(response.status).toBe(303);
    return (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  }

  it("runs its README's block: demo data, a signing key, npm start", async () => {
    const block = readmeBlocksAt('examples/host-app/README.md').get('run') ?? '';
    const lines = block.split('\n').filter((line) => line.trim());
    expect(lines[0]).toBe('npm install');
    const startLine = lines.at(-1) ?? '';
    expect(startLine).toMatch(/ npm start$/);
    for (const line of lines.slice(1, -1)) {
      const { env, argv } = shellLine(line);
      const result = await runOk(argv[0] as string, argv.slice(1), { cwd: dir, env });
      keys ||= /EDGE_SIGNING_KEYS=(\S+)/.exec(result.stdout)?.[1] ?? '';
    }
    expect(keys).toMatch(/^[\w-]+:[\w-]{40,}$/);
    // The start line as written, with the key keygen printed and a free port.
    const { env, argv } = shellLine(startLine);
    expect(env.EDGE_SIGNING_KEYS).toBe('kid:secret');
    app = await startProcess(argv[0] as string, argv.slice(1), {
      cwd: dir,
      env: { ...env, EDGE_SIGNING_KEYS: keys, PORT: '0' },
      ready: /listening on (http:\/\/\S+)\//,
    });
    origin = app.match[1] as string;
    expect((await fetch(`${origin}/login`)).status).toBe(200);
  });

  it('serves a signed-in dashboard whose every chart answers, for its own tenant only', async () => {
    const alice = await signIn('alice@acme');
    const page = await (await fetch(`${origin}/dashboard`, { headers: { cookie: alice } })).text();
    const ids = [...page.matchAll(/data-query="([^"]+)"[\s\S]*?query-id="([^"]+)"/g)].map(
      (m) => [m[1] as string, m[2] as string] as const,
    );
    expect(ids.length).toBeGreaterThan(10);
    const answers = new Map<string, Payload>();
    for (const [name, id] of ids) {
      const response = await fetch(`${origin}/analytics/api/data`, {
        headers: { authorization: `Bearer ${id}`, cookie: alice },
      });
      expect(response.status, name).toBe(200);
      answers.set(name, (await response.json()) as Payload);
    }
    // The demo data made by the README's block ends now: the last seven days hold events.
    expect(answers.get('kpi-events')?.value).toBeGreaterThan(0);

    const bob = await signIn('bob@globex');
    const replayed = await fetch(`${origin}/analytics/api/data`, {
      headers: { authorization: `Bearer ${ids[0]?.[1]}`, cookie: bob },
    });
    expect(replayed.status).toBe(403);

    const script = /<script type="module" src="(\/analytics\/analytics-chart[^"]*)"/.exec(
      page,
    )?.[1];
    expect(script).toBeDefined();
    expect(await (await fetch(`${origin}${script}`)).text()).toBe(installedBundle(dir));
  });

  it.each(['plain-html/index.html', 'cms-embed/article.html'])(
    '%s, copied out and filled with ids its CLI signs, draws every chart',
    async (page) => {
      const [folder = '', file = ''] = page.split('/');
      const copy = join(root, `example-${folder}`);
      cpSync(examplePath(folder), copy, { recursive: true });
      const edgeUrl = `${origin}/analytics`;
      let html = readFileSync(join(copy, file), 'utf8');
      // What the READMEs tell the author: sign each id with the edge's CLI and its registry
      // (this host app's), and paste it with the edge's URL over the placeholders.
      for (const [placeholder, query, tenant] of html.matchAll(
        /\{\{sign ([\w-]+) tenant=(\w+)\}\}/g,
      )) {
        const result = await runOk(
          'npx',
          [
            '--no',
            'analytics-edge',
            'sign',
            '--config',
            'analytics-edge.config.ts',
            '--public',
            '--query',
            query as string,
            '--param',
            `tenant=${tenant}`,
            '--base',
            edgeUrl,
          ],
          { cwd: dir, env: { EDGE_SIGNING_KEYS: keys, NODE_OPTIONS: '--import=tsx' } },
        );
        const id = /query-id="([^"]+)"/.exec(result.stdout)?.[1] ?? '';
        expect(id.split('.')).toHaveLength(3);
        html = html.replace(placeholder, id);
      }
      html = html.replaceAll('{{edge}}', edgeUrl);
      expect(html).not.toMatch(/\{\{\s*(edge|sign\s+[\w-])/);
      const site = await staticServer({ '/': { text: html, type: 'text/html' } });
      try {
        browser ??= await puppeteer.launch({
          executablePath: CHROME_PATH,
          headless: true,
          args: [...CHROMIUM_ARGS],
        });
        const tab = await browser.newPage();
        await tab.setViewport({ width: 1280, height: 2600 });
        await tab.goto(`${site.origin}/`);
        await tab.waitForFunction(
          () => {
            const charts = Array.from(document.querySelectorAll('analytics-chart'));
            return (
              charts.length > 0 &&
              charts.every((el) => ['ready', 'error'].includes((el as unknown as Chart).status))
            );
          },
          { timeout: 60_000, polling: 250 },
        );
        const statuses = await tab.$$eval('analytics-chart', (els) =>
          els.map((el) => (el as unknown as Chart).status),
        );
        expect(statuses).toEqual(['ready', 'ready', 'ready']);
      } finally {
        await site.close();
      }
    },
  );

  it('typechecks outside the workspace with its own tsconfig', async () => {
    const result = await runOk('npm', ['run', 'typecheck'], { cwd: dir });
    expect(result.stdout).toContain('tsc -p tsconfig.json');
  });
});

describe('examples/cloudflare-worker, copied out', () => {
  let mf: Miniflare | undefined;
  let engine: Started | undefined;
  let workerEngineUrl = '';
  const SESSION_SECRET = 'a-worker-session-secret-of-at-least-32-chars';
  const workerApiKey = `worker-${randomBytes(16).toString('hex')}`;

  beforeAll(async () => {
    // The Worker's registry reads the default collection, where the shared engine also holds
    // the quick start's demo data: this engine holds the suite's events alone.
    const engineDir = join(root, 'engine-service');
    const dataDir = mkdtempSync(join(root, 'worker-engine-'));
    await runOk('npx', ['--no', 'analytics-engine', 'load', '--data', dataDir, 'events.ndjson'], {
      cwd: engineDir,
    });
    engine = await startProcess(
      'npx',
      ['--no', 'analytics-engine', 'serve', '--data', dataDir, '--port', '0'],
      {
        cwd: engineDir,
        env: { ANALYTICS_API_KEY: workerApiKey },
        ready: /listening on (http:\/\/\S+)/,
      },
    );
    workerEngineUrl = engine.match[1] as string;
  });
  afterAll(async () => {
    await mf?.dispose();
    await engine?.stop();
  });

  it('builds with wrangler and answers signed-in charts with the numbers of the events', async () => {
    const dir = await installedExample('cloudflare-worker', { omitDev: true });
    const built = await buildAndRunWorker(dir, {
      ANALYTICS_BASE_URL: workerEngineUrl,
      ANALYTICS_API_KEY: workerApiKey,
      EDGE_SIGNING_KEYS: signingKeys,
      SESSION_SECRET,
    });
    mf = built.mf;
    const edge = 'http://edge.test/analytics';
    const now = Math.floor(Date.now() / 1000);
    const session = sessionJwt({ sub: 'alice', tenant: 'acme', exp: now + 600 }, SESSION_SECRET);
    const signed = await mf.dispatchFetch(`${edge}/api/sign`, {
      method: 'POST',
      headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'signups-week' }),
    });
    expect(signed.status).toBe(200);
    const { id } = (await signed.json()) as { id: string };
    const data = await mf.dispatchFetch(`${edge}/api/data`, {
      headers: { authorization: `Bearer ${id}`, cookie: `session=${session}` },
    });
    expect(data.status).toBe(200);
    const payload = (await data.json()) as Payload & { compareValue?: number };
    const signups = (from: number, to: number) =>
      events.filter(
        (e) =>
          e.json.tenant === 'acme' &&
          e.json.event === 'signup' &&
          e.timestamp > from &&
          e.timestamp < to,
      ).length;
    expect(payload.value).toBe(signups(now - 7 * DAY, now));
    expect(payload.compareValue).toBe(signups(now - 14 * DAY, now - 7 * DAY));
    expect(payload.value).toBeGreaterThan(0);

    const script = await mf.dispatchFetch(`${edge}/analytics-chart.js`);
    expect(await script.text()).toBe(installedBundle(dir));
  });
});
