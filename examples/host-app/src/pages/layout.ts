import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

/** What every page of the host app has: a title, a body, and external scripts only. */
export interface PageParts {
  title: string;
  body: HtmlEscapedString | Promise<HtmlEscapedString>;
  /** Module scripts by URL (the CSP allows no inline script). */
  scripts?: readonly string[];
  bodyClass?: string;
}

/** The HTML document around a page. Everything interpolated is escaped by `hono/html`. */
export function layout(parts: PageParts) {
  return html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${parts.title}</title>
    <link rel="stylesheet" href="/assets/host-app.css" />
    ${(parts.scripts ?? []).map((src) => html`<script type="module" src="${src}"></script>\n`)}
  </head>
  <body class="${parts.bodyClass ?? ''}">
    ${parts.body}
  </body>
</html>
`;
}
