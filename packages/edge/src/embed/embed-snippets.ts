import { DEFAULT_EMBED_HEIGHT, type EmbedOptions, embedOptionsQuery } from './embed-options.ts';

/** Escapes text for an HTML attribute value in double quotes or for element content. */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;');
}

/** The embed page's address of an id: `<base>/embed/<id>[?options]`. */
export function embedUrl(base: string, id: string, options: EmbedOptions = {}): string {
  return `${base.replace(/\/+$/, '')}/embed/${encodeURIComponent(id)}${embedOptionsQuery(options)}`;
}

/**
 * An iframe of an embed page. `width` is `100%` in the snippet authors paste (the column's width)
 * and whole pixels in an oEmbed answer; `height` is the page's own height, so the frame does not
 * jump when the optional resize script takes over. No `style` beyond the border, no `sandbox`:
 * the fewer attributes, the more CMS filters keep it whole.
 */
export function iframeHtml(frame: {
  src: string;
  title: string;
  width: number | '100%';
  height: number;
}): string {
  return `<iframe src="${escapeHtml(frame.src)}" title="${escapeHtml(frame.title)}" width="${frame.width}" height="${frame.height}" style="border:0" loading="lazy"></iframe>`;
}

/** What `snippetsFor` needs: the edge's public URL, the id, and optionally the viewer options. */
export interface SnippetInput {
  /** The edge's public URL, mount path included (`https://app.example.com/analytics`). */
  base: string;
  id: string;
  /** The iframe's title for assistive technology; the definition's title. */
  title?: string;
  options?: EmbedOptions;
  /**
   * Seconds between refreshes of the script snippet's element: a revoked id then shows its
   * notice without a reload. The embed page (iframe, URL) keeps its own behaviour.
   */
  refresh?: number;
}

/** The three ways to put a public id on a page, plus the optional resize script. */
export interface Snippets {
  /** The script tag and the element: the richest, for pages that allow both. */
  element: string;
  /** An iframe of the embed page: for editors that strip scripts and unknown elements. */
  iframe: string;
  /** The embed page's address: to paste where the CMS resolves URLs through oEmbed. */
  url: string;
  /** Once per page next to iframes, where scripts are allowed: frames follow their chart's height. */
  resizeScript: string;
}

/** Builds the snippets of a public id; a pure function of its input. */
export function snippetsFor(input: SnippetInput): Snippets {
  const base = input.base.replace(/\/+$/, '');
  const options = input.options ?? {};
  const attributes = [`query-id="${escapeHtml(input.id)}"`];
  if (options.range !== undefined) attributes.push(`range="${escapeHtml(options.range)}"`);
  if (options.theme !== undefined) attributes.push(`theme="${options.theme}"`);
  if (options.height !== undefined) attributes.push(`height="${options.height}"`);
  if (options.locale !== undefined) attributes.push(`locale="${escapeHtml(options.locale)}"`);
  if (input.refresh !== undefined && Number.isInteger(input.refresh) && input.refresh > 0) {
    attributes.push(`refresh="${input.refresh}"`);
  }
  const url = embedUrl(base, input.id, options);
  return {
    element: `<script type="module" src="${escapeHtml(base)}/analytics-chart.js"></script>\n<analytics-chart ${attributes.join(' ')}></analytics-chart>`,
    iframe: iframeHtml({
      src: url,
      title: input.title ?? 'Chart',
      width: '100%',
      height: options.height ?? DEFAULT_EMBED_HEIGHT,
    }),
    url,
    resizeScript: `<script async src="${escapeHtml(base)}/embed.js"></script>`,
  };
}
