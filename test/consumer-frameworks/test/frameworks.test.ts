/**
 * The element as a React 19, Preact, Vue 3 or Svelte 5 developer gets it: packed with `pnpm pack`,
 * installed with npm into a copy of `react-app/`, `preact-app/`, `vue-app/` or `svelte-app/` outside the
 * workspace, built with the app's own `npm run build` (`tsc -b`, `vue-tsc` or `svelte-check`
 * before `vite build`, so the generated typings are what type-checks `<analytics-chart …>`), and
 * opened in Chromium against the workspace's real engine and edge. The packed manifest's claims
 * are checked against the tarball's own files.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROME_PATH, CHROMIUM_ARGS } from '../../../scripts/chromium.mjs';
import { type ChartEdge, startChartEdge } from './support/chart-edge.ts';
import { readDrawnChart } from './support/drawn-chart.ts';
import { packWorkspacePackage, tarballFiles } from './support/pack.ts';
import { mustRun, run } from './support/run.ts';
import { installScratchApp } from './support/scratch-app.ts';
import { startStaticServer } from './support/static-server.ts';

interface ManifestMember {
  kind: string;
  name: string;
  privacy?: string;
  readonly?: boolean;
}
interface ManifestElement {
  tagName: string;
  attributes: { name: string; fieldName: string }[];
  members: ManifestMember[];
  events: { name: string; type?: { text: string } }[];
  cssProperties: { name: string; default?: string }[];
}
interface Manifest {
  modules: { path: string; declarations?: ManifestElement[] }[];
}

const work = mkdtempSync(join(tmpdir(), 'analytics-chart-frameworks-'));
const tarballs: Record<string, string> = {};
let files: string[] = [];
let unpacked = '';
let manifest: Manifest;
let element: ManifestElement;
let edge: ChartEdge;
let browser: Browser;
const pages = await Promise.all(Array.from({ length: 4 }, () => startStaticServer()));
type Pages = (typeof pages)[0];
const [reactPages, preactPages, vuePages, sveltePages] = pages as [Pages, Pages, Pages, Pages];

beforeAll(async () => {
  tarballs['@analytics-chart/protocol'] = await packWorkspacePackage('protocol', work);
  tarballs['@analytics-chart/element'] = await packWorkspacePackage('element', work);
  const elementTarball = tarballs['@analytics-chart/element'];
  files = await tarballFiles(elementTarball);
  unpacked = `${work}/element-unpacked`;
  await mustRun('mkdir', ['-p', unpacked], work);
  await mustRun('tar', ['-xzf', elementTarball, '-C', unpacked, '--strip-components=1'], work);
  manifest = JSON.parse(readFileSync(`${unpacked}/custom-elements.json`, 'utf8'));
  const found = manifest.modules.flatMap((m) => m.declarations ?? []).filter((d) => d.tagName);
  expect(found.map((d) => d.tagName)).toEqual(['analytics-chart']);
  element = found[0] as ManifestElement;
  installs = installTwoAtATime(['react-app', 'preact-app', 'vue-app', 'svelte-app']);
  edge = await startChartEdge(pages.map((p) => p.origin));
  browser = await puppeteer.launch({
    executablePath: CHROME_PATH,
    headless: true,
    args: [...CHROMIUM_ARGS],
  });
});

let installs = new Map<string, Promise<string>>();

/**
 * Starts each app's npm install as soon as the tarballs exist, two at a time in the apps' order,
 * so an install waiting on npm overlaps the type-check and build of the app before it. The
 * describe of each app awaits its own.
 */
function installTwoAtATime(names: string[]): Map<string, Promise<string>> {
  const lanes: Promise<unknown>[] = [Promise.resolve(), Promise.resolve()];
  const started = new Map<string, Promise<string>>();
  for (const [i, name] of names.entries()) {
    const installed = (lanes[i % 2] as Promise<unknown>).then(() =>
      installScratchApp(name, work, tarballs),
    );
    // Its describe reports a failure; until then it counts as handled.
    lanes[i % 2] = installed.catch(() => undefined);
    started.set(name, installed);
  }
  return started;
}

/** The installed copy of an app (its install started in beforeAll). */
function installedApp(name: string): Promise<string> {
  const installed = installs.get(name);
  if (!installed) throw new Error(`${name} was not installed`);
  return installed;
}

afterAll(async () => {
  await browser?.close();
  await edge?.close();
  await Promise.all(pages.map((p) => p.close()));
  // An install a failed test never awaited still writes into `work`.
  await Promise.allSettled(installs.values());
  rmSync(work, { recursive: true, force: true });
});

/** Every string under a `path` or `module` key of the manifest. */
function referencedPaths(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) referencedPaths(item, out);
  else if (node && typeof node === 'object')
    for (const [key, value] of Object.entries(node)) {
      if ((key === 'path' || key === 'module') && typeof value === 'string') out.push(value);
      else referencedPaths(value, out);
    }
  return out;
}

/** The shipped JavaScript of the element, concatenated. */
function shippedJs(): string {
  return files
    .filter((f) => f.startsWith('dist/esm/') && f.endsWith('.js'))
    .map((f) => readFileSync(`${unpacked}/${f}`, 'utf8'))
    .join('\n');
}

describe('the packed custom-elements.json', () => {
  it('names only files the tarball ships, and every export target is in it', () => {
    const paths = referencedPaths(manifest.modules);
    expect(paths.length).toBeGreaterThan(20);
    expect(paths.filter((p) => !files.includes(p))).toEqual([]);
    const pkg = JSON.parse(readFileSync(`${unpacked}/package.json`, 'utf8'));
    const targets = referencedExportTargets(pkg.exports);
    expect(targets).toContain('./package.json');
    expect(targets).toContain('./dist/jsx/react.d.ts');
    expect(targets).toContain('./dist/jsx/svelte.d.ts');
    expect(targets).toContain('./dist/jsx/vue.d.ts');
    expect(targets.filter((t) => !files.includes(t.slice(2)))).toEqual([]);
    expect(files).toContain(pkg.customElements);
  });

  it('lists exactly the custom properties the shipped styles read, with their light defaults', () => {
    const styles = readFileSync(`${unpacked}/dist/esm/analytics-chart.styles.js`, 'utf8');
    const used = new Set(styles.match(/--analytics-chart-[a-z0-9-]+/g));
    expect(element.cssProperties.map((p) => p.name).sort()).toEqual([...used].sort());
    for (const property of element.cssProperties) {
      // The first `var(--name, fallback)` of each is the light theme's.
      const fallback = new RegExp(`var\\(\\s*${property.name},\\s*([^;]*?)\\s*\\);`).exec(styles);
      expect(fallback?.[1]?.replace(/\s+/g, ' ').replace(/, /g, ', '), property.name).toBe(
        property.default,
      );
    }
  });

  it('lists exactly the events the shipped code dispatches, each typed with an exported detail', () => {
    const dispatched = [...shippedJs().matchAll(/chartEvent\(\s*['"]([a-z-]+)['"]/g)].map(
      (m) => m[1],
    );
    expect(element.events.map((e) => e.name).sort()).toEqual([...new Set(dispatched)].sort());
    const types = readFileSync(`${unpacked}/dist/types/index.d.ts`, 'utf8');
    for (const event of element.events) {
      const detail = /^CustomEvent<(\w+)>$/.exec(event.type?.text ?? '')?.[1];
      expect(detail, event.name).toBeTruthy();
      expect(types, event.name).toMatch(new RegExp(`\\b${detail}\\b`));
    }
  });

  it('lists no internal member, and every attribute maps to a listed field', () => {
    const internal = element.members.filter(
      (m) => /^[_#]/.test(m.name) || m.privacy === 'private' || m.privacy === 'protected',
    );
    expect(internal).toEqual([]);
    const fields = new Set(element.members.map((m) => m.name));
    expect(element.attributes.filter((a) => !fields.has(a.fieldName))).toEqual([]);
    const readOnly = element.members.filter((m) => m.readonly).map((m) => m.name);
    expect(readOnly.sort()).toEqual(['chart', 'mode', 'payload', 'status']);
  });

  it('generated VS Code custom data with the same tag and attributes', () => {
    const data = JSON.parse(readFileSync(`${unpacked}/dist/vscode.html-custom-data.json`, 'utf8'));
    const tag = data.tags.find((t: { name: string }) => t.name === 'analytics-chart');
    expect(tag.attributes.map((a: { name: string }) => a.name).sort()).toEqual(
      element.attributes.map((a) => a.name).sort(),
    );
  });
});

/**
 * The element README's one code block in `lang` (that holds `containing`), which the app's
 * type-check and build then cover.
 */
function readmeBlock(lang: string, containing = ''): string {
  const readme = readFileSync(
    new URL('../../../packages/element/README.md', import.meta.url),
    'utf8',
  );
  const blocks = [...readme.matchAll(new RegExp(`^\`\`\`${lang}\n([\\s\\S]*?)^\`\`\`$`, 'gm'))]
    .map((match) => match[1] ?? '')
    .filter((block) => block.includes(containing));
  expect(blocks, lang).toHaveLength(1);
  return blocks[0] ?? '';
}

/**
 * Writes `source` to `file` in the app, runs the app's type-checker on it (`npx …checker`), and
 * returns where it reported errors as `file:line`; the checker must fail.
 */
async function typeErrors(
  app: string,
  file: string,
  checker: string[],
  source: string[],
): Promise<{ at: string[]; output: string }> {
  writeFileSync(`${app}/${file}`, `${source.join('\n')}\n`);
  const { code, output } = await run('npx', checker, app);
  rmSync(`${app}/${file}`);
  expect(code, output).not.toBe(0);
  const at = output.split('\n').flatMap((line) => {
    // tsc and vue-tsc: `file(line,col): error TS…`; svelte-check --output machine: `… ERROR "file" line:col …`.
    const found =
      /^(\S+)\((\d+),\d+\): error TS/.exec(line) ?? /^\d+ ERROR "([^"]+)" (\d+):/.exec(line);
    return found ? [`${found[1]}:${found[2]}`] : [];
  });
  return { at, output };
}

/** Every file an `exports` map points at (conditions flattened). */
function referencedExportTargets(exports: unknown): string[] {
  if (typeof exports === 'string') return [exports];
  if (exports && typeof exports === 'object')
    return Object.values(exports).flatMap(referencedExportTargets);
  return [];
}

async function expectChartDrawn(origin: string, dist: string): Promise<void> {
  expect(existsSync(`${dist}/index.html`), 'the app was built').toBe(true);
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warn') errors.push(message.text());
  });
  const query = new URLSearchParams({ endpoint: edge.url, id: edge.queryId });
  await page.goto(`${origin}/?${query}`);
  const members = element.members.map((m) => m.name);
  const drawn = await readDrawnChart(page, members);
  expect(drawn.status).toBe('ready');
  expect(drawn.title).toBe('Daily views');
  expect(drawn.total).toBe(edge.eventCount);
  expect(drawn.seriesPixels).toBeGreaterThan(100);
  expect(drawn.missingMembers).toEqual([]);
  expect(await page.$eval('#status', (p) => p.textContent)).toBe('Loaded: Daily views');
  expect(errors).toEqual([]);
  await page.close();
}

/**
 * The same mistakes in a JSX app's `src/Wrong.tsx`, typed through `entry`: `tsc` reports the wrong
 * theme, the text refresh, the unknown prop and the wrong event detail, and nothing else.
 */
async function expectJsxMistakesRejected(app: string, entry: 'react' | 'preact'): Promise<void> {
  const { at, output } = await typeErrors(
    app,
    'src/Wrong.tsx',
    ['tsc', '-p', 'tsconfig.app.json', '--pretty', 'false'],
    [
      `import '@analytics-chart/element/${entry}';`,
      'export const wrongTheme = <analytics-chart theme="blue" />;',
      'export const wrongRefresh = <analytics-chart refresh="often" />;',
      // (TypeScript lets any dashed name through, as HTML allows data-* and aria-*.)
      'export const unknownProperty = <analytics-chart refreshEvery={5} />;',
      'export const wrongDetail = <analytics-chart onanalytics-chart-load={(e) => e.detail.rows} />;',
      'export const right = <analytics-chart theme="auto" refresh={30} height={240} lazy={false} />;',
    ],
  );
  expect(at, output).toEqual([
    'src/Wrong.tsx:2',
    'src/Wrong.tsx:3',
    'src/Wrong.tsx:4',
    'src/Wrong.tsx:5',
  ]);
}

describe('a Vite + React 19 app', () => {
  let app = '';

  it('type-checks and builds with the shipped typings (tsc -b && vite build)', async () => {
    app = await installedApp('react-app');
    writeFileSync(`${app}/src/ReadmeExample.tsx`, readmeBlock('tsx'));
    await mustRun('npm', ['run', 'build'], app);
    const pkg = await mustRun(
      'node',
      [
        '--input-type=module',
        '-e',
        "import p from '@analytics-chart/element/package.json' with { type: 'json' }; console.log(p.name)",
      ],
      app,
    );
    expect(pkg.trim()).toBe('@analytics-chart/element');
  });

  it('rejects an attribute of the wrong type, an unknown one and a wrong event detail', async () => {
    await expectJsxMistakesRejected(app, 'react');
  });

  it('draws the chart in Chromium', async () => {
    reactPages.serve(`${app}/dist`);
    await expectChartDrawn(reactPages.origin, `${app}/dist`);
  });
});

describe('a Vite + Preact app', () => {
  let app = '';

  it('type-checks and builds with the shipped typings (tsc -b && vite build)', async () => {
    app = await installedApp('preact-app');
    await mustRun('npm', ['run', 'build'], app);
  });

  it('rejects an attribute of the wrong type, an unknown one and a wrong event detail', async () => {
    await expectJsxMistakesRejected(app, 'preact');
  });

  it('draws the chart in Chromium', async () => {
    preactPages.serve(`${app}/dist`);
    await expectChartDrawn(preactPages.origin, `${app}/dist`);
  });
});

describe('a Vite + Vue 3 app with isCustomElement', () => {
  let app = '';

  it('type-checks (vue-tsc) and builds, compiling <analytics-chart> as a plain element', async () => {
    app = await installedApp('vue-app');
    // The README's Vite config and component, as a user would paste them.
    writeFileSync(`${app}/vite.config.js`, readmeBlock('js', 'isCustomElement'));
    writeFileSync(`${app}/src/ReadmeExample.vue`, readmeBlock('vue'));
    await mustRun('npm', ['run', 'build'], app);
    const assets = readdirSync(`${app}/dist/assets`).filter((f) => f.endsWith('.js'));
    const bundle = assets.map((f) => readFileSync(`${app}/dist/assets/${f}`, 'utf8')).join('\n');
    // Without isCustomElement the template asks resolveComponent('analytics-chart') (and Vue
    // warns in development); with it, the tag goes straight into an element vnode with its props.
    expect(bundle).toMatch(/\([`'"]analytics-chart[`'"],\{"query-id"/);
  });

  it('rejects an attribute of the wrong type and a wrong event detail', async () => {
    const { at, output } = await typeErrors(
      app,
      'src/Wrong.vue',
      ['vue-tsc', '--noEmit', '--pretty', 'false'],
      [
        '<script setup lang="ts"></script>',
        '<template>',
        '  <analytics-chart theme="blue" />',
        '  <analytics-chart refresh="often" />',
        '  <analytics-chart @analytics-chart-load="(e) => e.detail.rows" />',
        // Right types, and attributes Vue passes through to the element.
        '  <analytics-chart theme="auto" :refresh="30" :lazy="false" data-x="1" class="c" />',
        '</template>',
      ],
    );
    expect(at, output).toEqual(['src/Wrong.vue:3', 'src/Wrong.vue:4', 'src/Wrong.vue:5']);
  });

  it('draws the chart in Chromium', async () => {
    vuePages.serve(`${app}/dist`);
    await expectChartDrawn(vuePages.origin, `${app}/dist`);
  });
});

describe('a Vite + Svelte 5 app', () => {
  let app = '';

  it('type-checks and builds with the shipped typings (svelte-check, then vite build)', async () => {
    app = await installedApp('svelte-app');
    writeFileSync(`${app}/src/ReadmeExample.svelte`, readmeBlock('svelte'));
    await mustRun('npm', ['run', 'build'], app);
  });

  it('rejects an attribute of the wrong type, an unknown one and a wrong event detail', async () => {
    const checker = ['svelte-check', '--tsconfig', './tsconfig.app.json', '--output', 'machine'];
    const { at, output } = await typeErrors(app, 'src/Wrong.svelte', checker, [
      '<script lang="ts">',
      "  import '@analytics-chart/element/svelte';",
      '</script>',
      '<analytics-chart theme="blue"></analytics-chart>',
      '<analytics-chart refresh="often"></analytics-chart>',
      '<analytics-chart refreshEvery={5}></analytics-chart>',
      '<analytics-chart onanalytics-chart-load={(e) => e.detail.rows}></analytics-chart>',
      // Right types, and what any element takes: data-*, aria-*, class.
      '<analytics-chart theme="auto" refresh={30} data-x="1" aria-label="Views" class="c"></analytics-chart>',
    ]);
    expect(at, output).toEqual([
      'src/Wrong.svelte:4',
      'src/Wrong.svelte:5',
      'src/Wrong.svelte:6',
      'src/Wrong.svelte:7',
    ]);
  });

  it('draws the chart in Chromium', async () => {
    sveltePages.serve(`${app}/dist`);
    await expectChartDrawn(sveltePages.origin, `${app}/dist`);
  });
});
