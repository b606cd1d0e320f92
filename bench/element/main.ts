/**
 * `pnpm bench element`: the element in Chromium (puppeteer-core against the system Chromium).
 *
 * - CDN bundle size (gzip -9 and default level, brotli) against the 70 KB target, beside the same
 *   Lit + Chart.js parts without the element and `chart.js/auto`, built in this run.
 * - Time from payload arrival to drawn chart: the first chart in a fresh page and later charts
 *   (1,000 points), against raw Chart.js drawing the same data in the same kind of page.
 * - 100,000 points (LTTB decimation, no markers), against raw Chart.js with and without decimation.
 * - Heap growth after 1,000 connect/disconnect cycles, after forced GC.
 *
 * Options: `--samples=N` fresh pages per first-chart measurement (default 7).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { arch, cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { CHROME_PATH, CHROMIUM_ARGS, UNTHROTTLED_ARGS } from '../../scripts/chromium.mjs';
import { median } from '../stats.ts';

const here = dirname(fileURLToPath(import.meta.url));
const elementDir = join(here, '../../packages/element');
const bundlePath = join(elementDir, 'dist/analytics-chart.js');
const requireFromElement = createRequire(join(elementDir, 'package.json'));
// chart.js exports no path to its UMD file; it sits next to the package's main module.
const chartUmdPath = join(dirname(requireFromElement.resolve('chart.js')), 'chart.umd.min.js');

const TARGET_GZIP = 70 * 1024;
const STRETCH_GZIP = 65 * 1024;

// --- sizes -------------------------------------------------------------------------------------

interface Size {
  name: string;
  raw: number;
  gzip9: number;
  gzip6: number;
  brotli: number;
}

function sizeOf(name: string, bytes: Buffer): Size {
  return {
    name,
    raw: bytes.length,
    gzip9: gzipSync(bytes, { level: 9 }).length,
    gzip6: gzipSync(bytes).length,
    brotli: brotliCompressSync(bytes, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11 },
    }).length,
  };
}

/** Builds an entry with the element's Vite (same minifier and tree-shaking settings) and sizes it. */
async function buildSize(name: string, source: string): Promise<Size> {
  // The element's own Vite (bench does not depend on it), typed as far as used here.
  const { build } = (await import(requireFromElement.resolve('vite'))) as {
    build(config: Record<string, unknown>): Promise<unknown>;
  };
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const dir = mkdtempSync(join(elementDir, '.bench-'));
  try {
    writeFileSync(join(dir, 'entry.js'), source);
    await build({
      root: elementDir,
      configFile: false,
      logLevel: 'silent',
      build: {
        target: 'es2022',
        outDir: join(dir, 'out'),
        minify: true,
        lib: { entry: join(dir, 'entry.js'), formats: ['es'], fileName: () => 'out.js' },
        rolldownOptions: {
          treeshake: { propertyReadSideEffects: false },
          output: { minify: true, comments: { legal: false, annotation: false, jsdoc: false } },
        },
      },
    });
    return sizeOf(name, readFileSync(join(dir, 'out', 'out.js')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const PARTS = `import { Chart, ArcElement, BarController, BarElement, CategoryScale, Decimation,
  DoughnutController, LinearScale, LineController, LineElement, PieController, PointElement } from 'chart.js';
import { LitElement, html, css } from 'lit';
Chart.register(ArcElement, BarController, BarElement, CategoryScale, Decimation, DoughnutController,
  LinearScale, LineController, LineElement, PieController, PointElement);
class X extends LitElement { static styles = css\`:host{display:block}\`; render() { return html\`<canvas></canvas>\`; } }
customElements.define('x-baseline', X);
window.C = Chart;`;

// --- the page server ---------------------------------------------------------------------------

function generated(points: number): string {
  const labels: string[] = [];
  const values: number[] = [];
  const start = Date.UTC(2024, 0, 1);
  for (let i = 0; i < points; i++) {
    labels.push(new Date(start + i * 60_000).toISOString().slice(0, 16).replace('T', ' '));
    values.push(Math.round(500 + 400 * Math.sin(i / 50) + ((i * 7919) % 97)));
  }
  return JSON.stringify({
    graph: 'Single Line',
    title: `Generated (${points} points)`,
    granularity: 'Minute',
    timeZone: 'UTC',
    labels,
    series: [{ name: 'Count', values }],
    generatedAt: new Date().toISOString(),
    expiresAt: new Date(Date.now() + 60_000).toISOString(),
  });
}

async function startServer(): Promise<{ url: string; close(): Promise<void> }> {
  const bundle = readFileSync(bundlePath);
  const chartUmd = readFileSync(chartUmdPath);
  const harness = readFileSync(join(here, 'harness.js'));
  const payloads = new Map<string, string>();
  const page = (scripts: string) =>
    `<!doctype html><html lang="en"><head><meta charset="utf-8">${scripts}</head><body></body></html>`;
  const files: Record<string, [string, Buffer | string]> = {
    '/element.html': [
      'text/html',
      page(
        '<script src="/harness.js"></script><script type="module" src="/analytics-chart.js"></script>',
      ),
    ],
    '/raw.html': [
      'text/html',
      page('<script src="/harness.js"></script><script src="/chart.js"></script>'),
    ],
    '/analytics-chart.js': ['text/javascript', bundle],
    '/chart.js': ['text/javascript', chartUmd],
    '/harness.js': ['text/javascript', harness],
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path === '/api/data') {
      const id = /^Bearer points-(\d+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (!id) {
        res.writeHead(401, { 'Content-Type': 'application/json' });
        res.end('{"error":"The query id is not valid.","code":"invalid"}');
        return;
      }
      let body = payloads.get(id);
      if (!body) {
        body = generated(Number(id));
        payloads.set(id, body);
      }
      const etag = `"p${id}"`;
      if (req.headers['if-none-match'] === etag) {
        res.writeHead(304, { ETag: etag });
        res.end();
        return;
      }
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'Cache-Control': 'private, no-cache',
        ETag: etag,
      });
      res.end(body);
      return;
    }
    const file = files[path];
    if (!file) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': file[0], 'Cache-Control': 'no-store' });
    res.end(file[1]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// --- measurements ------------------------------------------------------------------------------

interface Timing {
  /** Payload arrival (response body read) → chart drawn (load event / Chart constructor returned). */
  draw: number;
  /** Payload arrival → the next animation frame after drawing. */
  frame: number;
  /** Element attached (or fetch started, raw) → chart drawn: includes the network wait. */
  total: number;
}

async function freshPage(browser: Browser, url: string): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewport({ width: 1000, height: 800 });
  page.on('pageerror', (error) => console.error(`page error: ${String(error)}`));
  await page.goto(url, { waitUntil: 'load' });
  return page;
}

async function timed(page: Page, expression: string): Promise<Timing> {
  return (await page.evaluate(expression)) as Timing;
}

async function heapUsed(page: Page): Promise<number> {
  const cdp = await page.createCDPSession();
  for (let i = 0; i < 3; i++) await cdp.send('HeapProfiler.collectGarbage');
  const { usedSize } = await cdp.send('Runtime.getHeapUsage');
  await cdp.detach();
  return usedSize;
}

const ms = (n: number) => `${n.toFixed(1)} ms`;
const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;

/** Runs the element benchmark and prints its tables. */
export async function run(args: string[]): Promise<void> {
  const samples = Number(args.find((a) => a.startsWith('--samples='))?.split('=')[1] ?? 7);
  console.log(
    `date ${new Date().toISOString()}; ${cpus()[0]?.model ?? 'cpu'} × ${cpus().length}, ${arch()}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB; node ${process.version}`,
  );

  console.log('\nbuilding the CDN bundle (pnpm --filter @analytics-chart/element build:cdn)…');
  execFileSync('pnpm', ['--filter', '@analytics-chart/element', 'run', 'build:cdn'], {
    stdio: 'ignore',
    cwd: elementDir,
  });
  const sizes = [
    sizeOf('analytics-chart.js (CDN bundle)', readFileSync(bundlePath)),
    await buildSize('Lit + the same Chart.js parts, no element', PARTS),
    await buildSize('chart.js/auto alone', `import Chart from 'chart.js/auto'; window.C = Chart;`),
  ];
  console.log('\n## bundle size');
  console.table(
    sizes.map((s) => ({
      bundle: s.name,
      raw: kb(s.raw),
      'gzip -9': `${kb(s.gzip9)} (${s.gzip9} B)`,
      'gzip -6': kb(s.gzip6),
      brotli: kb(s.brotli),
    })),
  );
  const cdn = sizes[0] as Size;
  console.log(
    `target ≤ ${kb(TARGET_GZIP)} gzip: ${cdn.gzip9 <= TARGET_GZIP ? 'met' : 'MISSED'}; stretch ≤ ${kb(STRETCH_GZIP)}: ${cdn.gzip9 <= STRETCH_GZIP ? 'met' : 'missed'}; element's own share ≈ ${kb(cdn.gzip9 - (sizes[1] as Size).gzip9)}`,
  );

  const server = await startServer();
  const browser = await puppeteer.launch({
    executablePath: CHROME_PATH,
    args: [...CHROMIUM_ARGS, ...UNTHROTTLED_ARGS],
    protocolTimeout: 120_000,
  });
  try {
    // First chart in a fresh page, then nine more in the same page (1,000 points each).
    const first: Timing[] = [];
    const later: Timing[] = [];
    const rawFirst: Timing[] = [];
    const rawLater: Timing[] = [];
    for (let i = 0; i < samples; i++) {
      const page = await freshPage(browser, `${server.url}/element.html`);
      await page.waitForFunction(`customElements.get('analytics-chart')`);
      first.push(await timed(page, `bench.element('points-1000')`));
      for (let j = 0; j < 9; j++) later.push(await timed(page, `bench.element('points-1000')`));
      await page.close();
      const raw = await freshPage(browser, `${server.url}/raw.html`);
      rawFirst.push(await timed(raw, `bench.raw('points-1000', false)`));
      for (let j = 0; j < 9; j++)
        rawLater.push(await timed(raw, `bench.raw('points-1000', false)`));
      await raw.close();
    }

    // 100,000 points: each in a page warmed by one small chart, so first-chart costs stay out.
    const big: Timing[] = [];
    const rawBig: Timing[] = [];
    const rawBigDecimated: Timing[] = [];
    for (let i = 0; i < Math.max(3, Math.ceil(samples / 2)); i++) {
      const page = await freshPage(browser, `${server.url}/element.html`);
      await page.waitForFunction(`customElements.get('analytics-chart')`);
      await timed(page, `bench.element('points-1000')`);
      big.push(await timed(page, `bench.element('points-100000')`));
      await page.close();
      const raw = await freshPage(browser, `${server.url}/raw.html`);
      await timed(raw, `bench.raw('points-1000', false)`);
      rawBigDecimated.push(await timed(raw, `bench.raw('points-100000', true)`));
      rawBig.push(await timed(raw, `bench.raw('points-100000', false)`));
      await raw.close();
    }

    const row = (name: string, t: Timing[], target?: number, base?: Timing[]) => ({
      measurement: name,
      n: t.length,
      'drawn (median)': ms(median(t.map((x) => x.draw))),
      'next frame (median)': ms(median(t.map((x) => x.frame))),
      'attach → drawn (median)': ms(median(t.map((x) => x.total))),
      'vs raw Chart.js': base
        ? `${(median(t.map((x) => x.draw)) / median(base.map((x) => x.draw))).toFixed(2)}×`
        : '',
      target:
        target === undefined
          ? ''
          : `≤ ${target} ms ${median(t.map((x) => x.draw)) <= target ? 'met' : 'MISSED'}`,
    });
    console.log('\n## time from payload arrival to drawn chart');
    console.log(
      'The element warms Chart.js up (one tiny off-screen chart per page) while its first request is in flight; "attach → drawn" includes that overlap and the local network wait.',
    );
    console.table([
      row('element: first chart in a page (1,000 points)', first, 100, rawFirst),
      row('element: later charts (1,000 points)', later, 20, rawLater),
      row('element: 100,000 points (decimated, no markers)', big, 150, rawBigDecimated),
      row('raw Chart.js: first chart (1,000 points)', rawFirst),
      row('raw Chart.js: later charts (1,000 points)', rawLater),
      row('raw Chart.js: 100,000 points, LTTB, no markers', rawBigDecimated),
      row('raw Chart.js: 100,000 points, defaults', rawBig),
    ]);

    // Heap after 1,000 connect/disconnect cycles, against the heap after a 20-cycle warm-up.
    const page = await freshPage(browser, `${server.url}/element.html`);
    await page.waitForFunction(`customElements.get('analytics-chart')`);
    await page.evaluate(`bench.cycles(20, 'points-1000')`);
    const warm = await heapUsed(page);
    const started = performance.now();
    await page.evaluate(`bench.cycles(1000, 'points-1000')`);
    const seconds = (performance.now() - started) / 1000;
    const afterNew = await heapUsed(page);
    await page.evaluate(`bench.reattach(1000, 'points-1000')`);
    const afterReattach = await heapUsed(page);
    const charts = (await page.evaluate(
      `document.querySelectorAll('analytics-chart').length`,
    )) as number;
    await page.close();
    console.log('\n## heap after 1,000 connect/disconnect cycles (after GC)');
    console.table([
      {
        measurement: '1,000 new elements: attach, load, draw, detach',
        'heap growth': kb(afterNew - warm),
        target: `< 1 MiB ${afterNew - warm < 1024 * 1024 ? 'met' : 'MISSED'}`,
        time: `${seconds.toFixed(1)} s`,
      },
      {
        measurement: 'one element re-attached 1,000 times',
        'heap growth': kb(afterReattach - afterNew),
        target: `< 1 MiB ${afterReattach - afterNew < 1024 * 1024 ? 'met' : 'MISSED'}`,
        time: '',
      },
    ]);
    console.log(`warm heap ${kb(warm)}; elements left in the page: ${charts}`);
  } finally {
    await browser.close();
    await server.close();
  }
}
