import { escapeHtml } from '../embed/embed-snippets.ts';

/**
 * The studio page's policy: its own script and stylesheet and the element's bundle, all from the
 * edge; data and API calls to the edge; never framed, no inline script or style, no eval.
 */
export const STUDIO_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers of the studio's page, script and stylesheet. */
export const STUDIO_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Content-Security-Policy': STUDIO_CSP,
  'Cache-Control': 'no-store',
};

function page(title: string, body: string, head = ''): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer"><meta name="robots" content="noindex"><link rel="icon" href="data:,"><title>${escapeHtml(title)}</title><link rel="stylesheet" href="studio.css">${head}</head><body>${body}</body></html>`;
}

/**
 * The studio: static HTML (no user data; the script fetches it from the studio API), the
 * element's bundle for the preview, and the studio's script. Paths are relative to `<base>/studio`.
 */
export function studioPageHtml(bundleFile: string): string {
  const field = (id: string, label: string, control: string, hint = '') =>
    `<div class="field"><label for="${id}">${label}</label>${hint ? `<p class="hint" id="${id}-hint">${hint}</p>` : ''}${control}</div>`;
  return page(
    'Embed studio',
    `<header class="top"><h1>Embed studio</h1><p>Signed in as <span id="subject">…</span></p></header>
<main>
<div class="columns">
<div class="settings">
<section aria-labelledby="chart-heading"><h2 id="chart-heading">1. Chart</h2>
${field('chart', 'Chart', '<select id="chart"></select>')}
<fieldset id="params"><legend>Parameters</legend><p id="no-params">This chart takes no parameters.</p></fieldset>
</section>
<section aria-labelledby="options-heading"><h2 id="options-heading">2. Viewer options</h2>
${field('theme', 'Theme', '<select id="theme"><option value="light">Light</option><option value="dark">Dark</option><option value="auto">Follow the reader’s system</option></select>')}
${field('height', 'Height in pixels', '<input id="height" type="number" min="80" max="2000" step="10" value="300" inputmode="numeric">')}
${field('range', 'Time range it opens with', '<select id="range"></select>')}
${field('locale', 'Locale (numbers and dates)', '<input id="locale" type="text" autocomplete="off" spellcheck="false" placeholder="e.g. en-GB" aria-describedby="locale-hint">', 'Empty: the reader’s own language.')}
${field('refresh', 'Refresh every (seconds)', '<input id="refresh" type="number" min="0" max="86400" value="60" inputmode="numeric" aria-describedby="refresh-hint">', '0: never. Applies to the page-with-script snippet.')}
</section>
</div>
<section class="preview" aria-labelledby="preview-heading"><h2 id="preview-heading">Preview</h2><div id="preview"></div></section>
</div>
<section aria-labelledby="publish-heading"><h2 id="publish-heading">3. Publish</h2>
<form id="publish" novalidate>
${field('label', 'Label (for your list of embeds)', '<input id="label" type="text" required maxlength="200" autocomplete="off">')}
${field('ttl', 'Expires after', '<select id="ttl"><option value="7d">7 days</option><option value="30d" selected>30 days</option><option value="90d">90 days</option><option value="365d">1 year</option></select>')}
${field('aud', 'Sites allowed to show it, one per line', '<textarea id="aud" rows="3" spellcheck="false" aria-describedby="aud-hint"></textarea>', 'Origins such as https://blog.example. Empty: any site.')}
<button type="submit" id="mint">Create embed</button>
</form>
</section>
<section id="snippets" aria-labelledby="snippets-heading" hidden><h2 id="snippets-heading" tabindex="-1">4. Copy the snippet</h2><div id="snippet-list"></div></section>
<section aria-labelledby="embeds-heading"><h2 id="embeds-heading" tabindex="-1">Your embeds</h2>
<p id="no-embeds">You have not published any chart yet.</p>
<table id="embeds" hidden><thead><tr><th scope="col">Label</th><th scope="col">Chart</th><th scope="col">Sites</th><th scope="col">Expires</th><th scope="col">Views</th><th scope="col">Last seen</th><th scope="col">Status</th></tr></thead><tbody></tbody></table>
</section>
<div id="status" class="status" role="status" aria-live="polite"></div>
</main>`,
    `<script type="module" src="${escapeHtml(bundleFile)}"></script><script type="module" src="studio.js"></script>`,
  );
}

/** The page shown instead of the studio: why, and what to do. */
export function studioRefusalHtml(message: string): string {
  return page(
    'Embed studio',
    `<main><h1>Embed studio</h1><p class="refusal" role="alert">${escapeHtml(message)}</p></main>`,
  );
}
