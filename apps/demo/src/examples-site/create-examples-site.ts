import { readFileSync } from 'node:fs';
import type { Edge } from '@analytics-chart/edge';
import { Hono } from 'hono';
import { html } from 'hono/html';
import { repoPath } from '../repo-paths.ts';
import { fillExampleTemplate } from './fill-example-template.ts';

/** The example pages the demo serves, by path: template files of the repository. */
export const EXAMPLE_PAGES: Readonly<
  Record<string, { file: string; title: string; about: string }>
> = {
  '/plain-html/': {
    file: 'examples/plain-html/index.html',
    title: 'Plain HTML page',
    about: 'A static page with public ids: one script tag and a few elements, no session.',
  },
  '/cms-embed/': {
    file: 'examples/cms-embed/article.html',
    title: 'CMS article with an embed',
    about: 'The snippet a CMS author pastes, inside an article on another origin.',
  },
};

/** Where the example site's pages get their charts. */
export interface ExamplesSiteOptions {
  /** The edge that mints the public ids. */
  edge: Edge;
  /** The edge's public URL (its mount path included), e.g. `http://127.0.0.1:8787/analytics`. */
  edgeUrl: string;
  /** Where the dashboard lives, for the index page's link. */
  dashboardUrl: string;
  /**
   * The site's own public origin, e.g. `http://127.0.0.1:8788`: every id's `aud`. Taken from
   * configuration, never from a request's `Host` header, which any client may set.
   */
  origin: string;
}

/** The example site: its app, and a way to mint every page's ids ahead of the first visit. */
export interface ExamplesSite {
  app: Hono;
  /** Fills every page now (at start), so a broken template fails at once. */
  prerender(): Promise<void>;
  /** How many rendered pages are kept: at most one per path of {@link EXAMPLE_PAGES}. */
  pagesKept(): number;
}

/**
 * A second origin serving the example pages, as a page author's or CMS's site would: each
 * template filled with public ids minted once (at start or first request), limited (`aud`) to
 * the configured origin, and a CSP that allows scripts and fetches from the edge only. The
 * request's `Host` plays no part, so the pages kept are one per path whoever asks.
 */
export function createExamplesSite(options: ExamplesSiteOptions): ExamplesSite {
  const edgeOrigin = new URL(options.edgeUrl).origin;
  const origin = new URL(options.origin).origin;
  // One entry per path of EXAMPLE_PAGES, never more: the bound of this cache.
  const rendered = new Map<string, Promise<string>>();
  const app = new Hono();

  function render(path: string, file: string): Promise<string> {
    const key = path;
    let body = rendered.get(key);
    if (!body) {
      const template = readFileSync(repoPath(file), 'utf8');
      body = fillExampleTemplate(template, options.edgeUrl, async ({ query, params }) => {
        const signed = await options.edge.signQueryId({
          query,
          params,
          public: true,
          audience: origin,
        });
        return signed.id;
      });
      body.catch(() => rendered.delete(key));
      rendered.set(key, body);
    }
    return body;
  }

  app.use('*', async (c, next) => {
    await next();
    c.header(
      'Content-Security-Policy',
      `default-src 'none'; script-src ${edgeOrigin}; connect-src ${edgeOrigin}; style-src 'unsafe-inline'; img-src data: blob:; base-uri 'none'; frame-ancestors 'none'`,
    );
    c.header('X-Content-Type-Options', 'nosniff');
  });

  app.get('/', (c) =>
    c.html(
      html`<!doctype html>
<html lang="en">
  <head><meta charset="utf-8" /><title>analytics-chart examples</title>
  <style>body{font-family:system-ui,sans-serif;max-width:720px;margin:40px auto;padding:0 16px;line-height:1.5}</style></head>
  <body>
    <h1>analytics-chart examples</h1>
    <p>These pages live on their own origin, as a customer's site or CMS would. Their charts use
    public ids minted by this demo's edge when the page was first served.</p>
    <ul>
      ${Object.entries(EXAMPLE_PAGES).map(
        ([path, page]) => html`<li><a href="${path}">${page.title}</a>: ${page.about}</li>`,
      )}
    </ul>
    <p>The signed-in dashboard: <a href="${options.dashboardUrl}">${options.dashboardUrl}</a></p>
  </body>
</html>`,
    ),
  );

  for (const [path, page] of Object.entries(EXAMPLE_PAGES)) {
    app.get(path, async (c) => {
      const body = await render(path, page.file);
      c.header('Cache-Control', 'no-cache');
      return c.html(body);
    });
    app.get(path.replace(/\/$/, ''), (c) => c.redirect(path, 301));
  }

  app.get('/favicon.ico', (c) => c.body(null, 204));
  app.notFound((c) => c.text('There is nothing here.', 404));
  return {
    app,
    prerender: async () => {
      for (const [path, page] of Object.entries(EXAMPLE_PAGES)) await render(path, page.file);
    },
    pagesKept: () => rendered.size,
  };
}
