/**
 * Every CMS snippet in a real WordPress 6.1 (Debian's `wordpress`, MariaDB, Apache with mod_php),
 * as each role, without and with the plugin: each post is written through the REST API as that
 * role (so WordPress's own filter, kses, applies exactly as in the editor), published, loaded in
 * Chromium, and the chart's canvas pixels read. The results are then held against the tables of
 * the CMS guide (examples/cms-embed/README.md): a wrong cell there fails this test.
 *
 * The test WordPress has one must-use plugin: WordPress's safe HTTP fetch (oEmbed discovery and
 * requests) reaches only ports 80, 443 and 8080, and the test's edge listens on another.
 */
import { fileURLToPath } from 'node:url';
import { snippetsFor } from '@analytics-chart/edge';
import { cellWord, type GuideTable, tableUnder } from '@analytics-chart/test-kit/guide-tables';
import puppeteer, { type Browser, type BrowserContext, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROME_PATH, CHROMIUM_ARGS, UNTHROTTLED_ARGS } from '../../../scripts/chromium.mjs';
import { PLUGIN_ZIP, packWordPressPlugin } from '../../../scripts/pack-wordpress-plugin.mjs';
import { type AnalyticsEdge, startAnalyticsEdge } from './support/analytics-edge.ts';
import { chartOutcome, type Outcome, type Seen } from './support/chart-outcome.ts';
import { type PublishedPost, publishAs, ROLES, type Role } from './support/wordpress-posts.ts';
import {
  checkWordPressStack,
  startWordPress,
  type WordPressStack,
} from './support/wordpress-stack.ts';

const GUIDE = fileURLToPath(new URL('../../../examples/cms-embed/README.md', import.meta.url));
const TITLE = 'Signups per day';

type Snippet = 'url' | 'iframe' | 'element' | 'shortcode' | 'block';
/**
 * `open` and `aud` as in the guide's rows, each minted without `--`; `dashes` an open id that
 * contains `--` (a base64url JWT does about one time in forty), which must fare exactly as `open`.
 */
type IdKind = 'open' | 'aud' | 'dashes';
const ID_KINDS = ['open', 'aud', 'dashes'] as const satisfies readonly IdKind[];

/** One cell of the matrix: a snippet, pasted by a role, with or without the plugin. */
interface Cell {
  plugin: boolean;
  snippet: Snippet;
  idKind: IdKind;
  role: Role;
}

/** What became of a cell: what kses stored, and what a reader saw. */
interface Observed extends Cell {
  stored: 'kept' | 'removed' | 'changed';
  seen: Seen;
  post: PublishedPost;
}

let edge: AnalyticsEdge;
let wp: WordPressStack;
let browser: Browser;
const ids: Record<IdKind | 'revocable', { id: string; jti: string }> = {} as never;
/** The block as the block editor saves it (its own serializer's output), by id. */
const savedBlocks = new Map<string, string>();
const observed: Observed[] = [];
/** Posts holding the revocable id, published before it is revoked. */
const revocable: PublishedPost[] = [];

/** What an author pastes for a snippet. */
function pasted(snippet: Snippet, id: string): string {
  const snippets = snippetsFor({ base: edge.url, id, title: TITLE });
  switch (snippet) {
    case 'url':
      return snippets.url;
    case 'iframe':
      return snippets.iframe;
    case 'element':
      return snippets.element;
    case 'shortcode':
      return `[analytics_chart id="${id}" title="${TITLE}"]`;
    case 'block': {
      const saved = savedBlocks.get(id);
      if (saved === undefined) throw new Error('the block editor has not serialized this id');
      return saved;
    }
  }
}

/** Mints ids for `audience` until one does (`dashes`) or does not contain `--`. */
async function mint(kind: IdKind, audience?: string) {
  for (let attempt = 0; attempt < 5000; attempt++) {
    const minted = await edge.publicId(audience);
    if (minted.id.includes('--') === (kind === 'dashes')) return minted;
  }
  throw new Error(`no ${kind} id in 5000 attempts`);
}

/** A post around a snippet: a paragraph before, the snippet on its own lines, one after. */
function article(snippet: string): string {
  return `<p>Before the chart.</p>\n\n${snippet}\n\n<p>After the chart.</p>`;
}

/** Whether kses kept the snippet, removed every trace of it, or changed it. */
function storedAs(stored: string, snippet: string, id: string): Observed['stored'] {
  if (stored.includes(snippet)) return 'kept';
  return stored.includes(id) ? 'changed' : 'removed';
}

/** Runs `work` on each item, `limit` at a time. */
async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, slot: number) => Promise<void>,
) {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: limit }, async (_, slot) => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift())
        await work(item, slot);
    }),
  );
}

/** The administrator's signed-in window, for the plugin's settings and the block editor. */
let adminContext: BrowserContext | undefined;
let adminPage: Page | undefined;
/** Pages reused across cells, one per concurrent slot. */
const pages: Page[] = [];
const SLOTS = 4;

/** Publishes and reads every cell of `snippets` × ids × roles. */
async function runCells(plugin: boolean, snippets: readonly Snippet[]) {
  const cells: Cell[] = snippets.flatMap((snippet) =>
    ID_KINDS.flatMap((idKind) => ROLES.map((role) => ({ plugin, snippet, idKind, role }))),
  );
  await eachLimited(cells, SLOTS, async (cell, slot) => {
    const { id } = ids[cell.idKind];
    const snippet = pasted(cell.snippet, id);
    const post = await publishAs(
      wp,
      cell.role,
      `${cell.snippet} ${cell.idKind} ${cell.role}`,
      article(snippet),
    );
    const page = pages[slot] as Page;
    const seen = await chartOutcome(page, post.link, edge.url);
    observed.push({ ...cell, stored: storedAs(post.stored, snippet, id), seen, post });
  });
}

beforeAll(async () => {
  // Fails first, naming the Debian packages to install, before anything is started.
  checkWordPressStack();
  const zip = packWordPressPlugin();
  const started = await Promise.allSettled([
    startAnalyticsEdge(),
    startWordPress(),
    puppeteer.launch({
      executablePath: CHROME_PATH,
      headless: true,
      args: [...CHROMIUM_ARGS, ...UNTHROTTLED_ARGS],
      defaultViewport: { width: 1000, height: 900 },
    }),
  ]);
  // Whatever started is stopped by afterAll, even when another part failed.
  if (started[0].status === 'fulfilled') edge = started[0].value;
  if (started[1].status === 'fulfilled') wp = started[1].value;
  if (started[2].status === 'fulfilled') browser = started[2].value;
  for (const result of started) if (result.status === 'rejected') throw result.reason;
  expect(zip).toBe(PLUGIN_ZIP);
  const port = new URL(edge.url).port;
  await wp.mustUsePlugin(
    'test-edge-port.php',
    `<?php\n// The test's edge listens on a port WordPress's safe HTTP fetch does not allow by default.\nadd_filter('http_allowed_safe_ports', function ($ports) { $ports[] = ${port}; return $ports; });\n`,
  );
  ids.open = await mint('open');
  ids.aud = await mint('aud', wp.url);
  ids.dashes = await mint('dashes');
  ids.revocable = await edge.publicId();
  // A window each: a background tab runs no animation frame, so its chart would never draw.
  for (let i = 0; i < SLOTS; i++) pages.push(await browser.newPage({ type: 'window' }));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await wp?.stop();
  await edge?.close();
});

describe('WordPress 6.1, Debian', () => {
  it('gives unfiltered_html to administrators and editors only', () => {
    expect(Object.fromEntries(ROLES.map((role) => [role, wp.users[role].unfilteredHtml]))).toEqual({
      administrator: true,
      editor: true,
      author: false,
      contributor: false,
    });
  });

  it('without the plugin: each snippet as each role, published and drawn or not', async () => {
    await runCells(false, ['url', 'iframe', 'element']);
    const discovered = await publishAs(
      wp,
      'contributor',
      'revocable url',
      article(pasted('url', ids.revocable.id)),
    );
    // Read once now, so WordPress keeps the discovered (sandboxed) frame it found for it.
    expect((await chartOutcome(pages[0] as Page, discovered.link, edge.url)).outcome).toBe('draws');
    revocable.push(discovered);
    expect(observed.filter((o) => !o.plugin)).toHaveLength(36);
  });

  it('installs the plugin from its zip on the upload screen, and its settings page sets the edge URL', async () => {
    // The administrator signs in in a context of their own: the cells' pages stay anonymous readers.
    adminContext = await browser.createBrowserContext();
    adminPage = await adminContext.newPage({ type: 'window' });
    const page = adminPage;
    const upload = `${wp.url}/wp-admin/plugin-install.php?tab=upload`;
    await page.goto(`${wp.url}/wp-login.php?redirect_to=${encodeURIComponent(upload)}`);
    // wp-login.php focuses and selects the user name 200 ms after load; typing before that would
    // send the rest of the password into the user name, so wait for it as a person would.
    await page.waitForFunction('document.activeElement?.id === "user_login"');
    await page.type('#user_login', 'administrator');
    await page.type('#user_pass', wp.users.administrator.password);
    await Promise.all([page.waitForNavigation(), page.click('#wp-submit')]);
    expect(page.url()).toBe(upload);
    // Plugins → Add New → Upload Plugin, the zip, Install Now, then Activate Plugin.
    const input = await page.$('#pluginzip');
    await input?.uploadFile(PLUGIN_ZIP);
    await Promise.all([page.waitForNavigation(), page.click('#install-plugin-submit')]);
    const installed = (await page.evaluate('document.querySelector(".wrap")?.innerText')) as string;
    expect(installed).toContain('Plugin installed successfully.');
    await Promise.all([
      page.waitForNavigation(),
      page.click('.wrap a[href*="action=activate"][href*="analytics-chart%2Fanalytics-chart.php"]'),
    ]);
    expect(await page.evaluate('document.querySelector("#message")?.innerText')).toContain(
      'Plugin activated.',
    );
    const settings = `${wp.url}/wp-admin/options-general.php?page=analytics-chart`;
    const save = async (value: string) => {
      await page.goto(settings);
      await page.$eval('#analytics_chart_edge_url', (input) => {
        (input as unknown as { value: string }).value = '';
      });
      await page.type('#analytics_chart_edge_url', value);
      await Promise.all([page.waitForNavigation(), page.click('#submit')]);
      return {
        notices: (await page.$$eval('.notice, .error, .updated', (nodes) =>
          nodes.map((n) => (n.textContent ?? '').trim()),
        )) as string[],
        value: await page.$eval(
          '#analytics_chart_edge_url',
          (input) => (input as unknown as { value: string }).value,
        ),
      };
    };
    // A trailing slash is dropped; a value that is not an http(s) base URL is refused.
    const saved = await save(`${edge.url}/`);
    expect(saved.value).toBe(edge.url);
    expect(saved.notices.join(' ')).toContain('Settings saved.');
    const refused = await save(`${edge.url}?x=1`);
    expect(refused.value).toBe(edge.url);
    expect(refused.notices.join(' ')).toContain('The edge URL must be an http or https address');
  });

  it('offers the block in the block editor, previewed by the server', async () => {
    // The administrator's window, signed in above; closed after, unsaved post and all.
    const page = adminPage as Page;
    await page.goto(`${wp.url}/wp-admin/post-new.php`);
    await page.waitForFunction(
      `window.wp?.blocks?.getBlockType('analytics-chart/chart') !== undefined`,
      { timeout: 30_000 },
    );
    await page.evaluate(
      `wp.data.dispatch('core/block-editor').insertBlocks(wp.blocks.createBlock('analytics-chart/chart', { id: ${JSON.stringify(ids.open.id)}, title: 'Preview' }))`,
    );
    const preview = await page.waitForSelector(`iframe[src^="${edge.url}/embed/${ids.open.id}"]`, {
      timeout: 30_000,
    });
    expect(await preview?.evaluate((frame) => frame.getAttribute('title'))).toBe('Preview');
    // What the editor saves for each id, pasted by the cells as a user's saved post would be.
    for (const kind of ID_KINDS) {
      const { id } = ids[kind];
      const saved = (await page.evaluate(
        `wp.blocks.serialize(wp.blocks.createBlock('analytics-chart/chart', { id: ${JSON.stringify(id)}, title: ${JSON.stringify(TITLE)} }))`,
      )) as string;
      // Gutenberg's serializeAttributes writes `--` as `\u002d\u002d`: an HTML comment may not hold `--`.
      const json = JSON.stringify({ id, title: TITLE }).replaceAll('--', '\\u002d\\u002d');
      expect(saved, kind).toBe(`<!-- wp:analytics-chart/chart ${json} /-->`);
      savedBlocks.set(id, saved);
    }
    await page.close();
  });

  it('with the plugin: each snippet as each role, published and drawn or not', async () => {
    await runCells(true, ['url', 'iframe', 'element', 'shortcode', 'block']);
    revocable.push(
      await publishAs(
        wp,
        'author',
        'revocable shortcode',
        article(pasted('shortcode', ids.revocable.id)),
      ),
    );
    expect(observed.filter((o) => o.plugin)).toHaveLength(60);
    // A malformed id: readers see neither a frame nor the shortcode's text.
    const broken = await publishAs(
      wp,
      'author',
      'broken',
      article('[analytics_chart id="not-an-id"]'),
    );
    const page = pages[0] as Page;
    await page.goto(broken.link);
    expect(await page.evaluate('document.querySelector(".entry-content").innerText')).toBe(
      'Before the chart.\n\nAfter the chart.',
    );
    expect(await page.$('iframe')).toBeNull();
    // Whoever may edit posts is told what to do instead.
    const editorView = await (adminContext as BrowserContext).newPage({ type: 'window' });
    await editorView.goto(broken.link);
    expect(
      await editorView.evaluate('document.querySelector(".entry-content").innerText'),
    ).toContain('Analytics Chart: that is not a chart id.');
    await editorView.close();
  });

  it('shows the revoked notice inside posts published before the id was revoked', async () => {
    const page = pages[0] as Page;
    const [discovered] = revocable;
    await page.goto(discovered?.link ?? '');
    expect(await page.$('iframe[sandbox="allow-scripts"]'), 'the discovered frame').not.toBeNull();
    for (const post of revocable) {
      expect((await chartOutcome(page, post.link, edge.url)).outcome, post.link).toBe('draws');
    }
    await edge.revoke(ids.revocable.jti);
    for (const post of revocable) {
      const seen = await chartOutcome(page, post.link, edge.url);
      expect(seen.outcome, post.link).toBe('refused');
      // The reader's sentence first; what the author may do follows it.
      expect(seen.message, post.link).toMatch(/^This chart link is not valid\./);
    }
  });
});

/** Row labels of the guide's WordPress tables, and the cells they stand for. */
const ROWS: Record<string, [Snippet, IdKind]> = {
  'Embed URL on its own line': ['url', 'open'],
  'Embed URL, id with `--aud`': ['url', 'aud'],
  Iframe: ['iframe', 'open'],
  'Iframe, id with `--aud`': ['iframe', 'aud'],
  'Script and element': ['element', 'open'],
  'Script and element, id with `--aud`': ['element', 'aud'],
  'Shortcode `[analytics_chart id="…"]`': ['shortcode', 'open'],
  'Shortcode, id with `--aud`': ['shortcode', 'aud'],
  'Analytics Chart block': ['block', 'open'],
  'Analytics Chart block, id with `--aud`': ['block', 'aud'],
};

const ROLE_NAMES: Record<Role, string> = {
  administrator: 'Administrator',
  editor: 'Editor',
  author: 'Author',
  contributor: 'Contributor',
};

/** What kses did to a row's snippet across the roles, in the guide's words. */
function ksesPhrase(row: Observed[]): string {
  const byRole = (what: Observed['stored']) =>
    ROLES.filter((role) => row.find((o) => o.role === role)?.stored === what).map(
      (r) => ROLE_NAMES[r],
    );
  const removed = byRole('removed');
  const changed = byRole('changed');
  const parts = [
    ...(removed.length ? [`removes it for ${removed.join(' and ')}`] : []),
    ...(changed.length ? [`changes it for ${changed.join(' and ')}`] : []),
  ];
  return parts.length ? parts.join('; ') : 'keeps it';
}

/** Holds one of the guide's WordPress tables against the observed cells. */
function expectTableTrue(table: GuideTable, plugin: boolean, snippets: readonly Snippet[]) {
  expect(table.header).toEqual(['Snippet', ...ROLES.map((r) => ROLE_NAMES[r]), 'What kses does']);
  const covered = new Set<string>();
  for (const [label, ...cells] of table.rows) {
    const key = ROWS[label ?? ''];
    expect(key, `row "${label}" of the guide is none of the snippets tested`).toBeDefined();
    const [snippet, idKind] = key as [Snippet, IdKind];
    covered.add(`${snippet} ${idKind}`);
    const row = observed.filter(
      (o) => o.plugin === plugin && o.snippet === snippet && o.idKind === idKind,
    );
    expect(row).toHaveLength(4);
    ROLES.forEach((role, i) => {
      const seen = row.find((o) => o.role === role)?.seen.outcome as Outcome;
      expect(cellWord(cells[i] ?? ''), `${label} / ${ROLE_NAMES[role]} (plugin: ${plugin})`).toBe(
        seen,
      );
    });
    expect(cells[4], `${label} / What kses does (plugin: ${plugin})`).toBe(ksesPhrase(row));
  }
  // Every snippet tested has its row.
  expect([...covered].sort()).toEqual(snippets.flatMap((s) => [`${s} aud`, `${s} open`]).sort());
  // An open id containing `--` fares as any open id: kses stores it alike and readers see the same.
  const fate = (idKind: IdKind) =>
    observed
      .filter((o) => o.plugin === plugin && o.idKind === idKind)
      .map((o) => `${o.snippet} ${o.role}: ${o.stored} ${o.seen.outcome}`)
      .sort();
  expect(fate('dashes')).toEqual(fate('open'));
}

describe('the CMS guide', () => {
  it('says for WordPress without the plugin exactly what was observed', () => {
    expectTableTrue(tableUnder(GUIDE, 'WordPress without the plugin'), false, [
      'url',
      'iframe',
      'element',
    ]);
  });

  it('says for WordPress with the plugin exactly what was observed', () => {
    expectTableTrue(tableUnder(GUIDE, 'WordPress with the plugin'), true, [
      'url',
      'iframe',
      'element',
      'shortcode',
      'block',
    ]);
  });

  it('prints the observations (for rewriting the guide)', () => {
    const lines = observed
      .sort(
        (a, b) =>
          Number(a.plugin) - Number(b.plugin) ||
          a.snippet.localeCompare(b.snippet) ||
          a.idKind.localeCompare(b.idKind) ||
          ROLES.indexOf(a.role) - ROLES.indexOf(b.role),
      )
      .map(
        (o) =>
          `${o.plugin ? 'plugin' : 'none  '} ${o.snippet.padEnd(9)} ${o.idKind.padEnd(4)} ${o.role.padEnd(13)} ${o.stored.padEnd(8)} ${o.seen.outcome} ${o.seen.message ?? ''}`,
      );
    console.log(lines.join('\n'));
    expect(lines.length).toBe(96);
  });
});
