import { DEFAULT_EMBED_HEIGHT, type EmbedOptions } from './embed-options.ts';
import { escapeHtml } from './embed-snippets.ts';

/**
 * The embed page's only style, inline and allowed by its hash. A chart page is as tall as its
 * element (no margins), so the frame's snippet height is the page's height; an error page fills
 * whatever frame it is in, so nothing around it jumps either.
 */
export const EMBED_STYLE =
  'html,body{margin:0;padding:0;background:transparent}' +
  'analytics-chart{display:block}' +
  'html.error,html.error body{height:100%}' +
  '.error body{box-sizing:border-box;padding:1px}' +
  '.message{box-sizing:border-box;height:100%;display:flex;flex-direction:column;justify-content:center;gap:6px;padding:16px 20px;border:1px solid #d8dae0;border-radius:8px;background:#f7f8fa;color:#3a3f4b;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif}' +
  '.message strong{font-size:15px;color:#1d2029}' +
  '.dark .message{background:#1f2128;border-color:#3a3d47;color:#c9ccd6}.dark .message strong{color:#f1f2f6}' +
  '@media (prefers-color-scheme:dark){.auto .message{background:#1f2128;border-color:#3a3d47;color:#c9ccd6}.auto .message strong{color:#f1f2f6}}';

let styleHash: Promise<string> | undefined;

/** The CSP source of {@link EMBED_STYLE}: `'sha256-…'`, computed once. */
export function embedStyleSource(): Promise<string> {
  styleHash ??= crypto.subtle
    .digest('SHA-256', new TextEncoder().encode(EMBED_STYLE))
    .then((digest) => `'sha256-${btoa(String.fromCharCode(...new Uint8Array(digest)))}'`);
  return styleHash;
}

const ORIGIN =
  /^https?:\/\/(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/**
 * The `frame-ancestors` sources of an id: its `aud` origins, or `*` for an id without one (such an
 * id may be shown by the element on any origin already). An `aud` entry that is not a plain
 * origin is dropped rather than written into the header; none left means `'none'`.
 */
export function frameAncestors(audience: readonly string[] | undefined): string {
  if (audience === undefined) return '*';
  const origins = audience.filter((origin) => ORIGIN.test(origin));
  return origins.length ? origins.join(' ') : "'none'";
}

/**
 * The embed page's policy: scripts only from the edge itself (the element's bundle and the
 * height reporter), the one hashed style, data fetched from the edge, and framing by `ancestors`.
 */
export function embedCsp(ancestors: string, styleSource: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' ${styleSource}`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${ancestors}`,
  ].join('; ');
}

/** What the chart page shows. Script paths are relative to `<base>/embed/<id>`. */
export interface EmbedPageInput {
  id: string;
  title: string;
  options: EmbedOptions;
  /** The bundle's file name (`analytics-chart.<hash>.js`). */
  bundleFile: string;
  /** The oEmbed discovery address, when the edge knows its public URL. */
  oembedHref?: string;
  /** The page's language when the options name no locale (see {@link pageLanguage}). */
  lang?: string;
  /**
   * The element's data endpoint, relative to the page, when it is not the edge's root: the
   * ticketed address the page's data request needs inside a sandboxed frame.
   */
  endpoint?: string;
}

/**
 * The embed page's `lang` without a `locale` option: the reader's first language as the browser
 * sends it (what the chart formats in anyway), else English, the language of the page's texts.
 */
export function pageLanguage(acceptLanguage: string | undefined): string {
  const first = acceptLanguage?.split(',')[0]?.split(';')[0]?.trim() ?? '';
  if (first && first !== '*' && first.length <= 35) {
    try {
      const [tag] = Intl.getCanonicalLocales(first);
      if (tag) return tag;
    } catch {
      // Not a language tag: fall through to the page's own language.
    }
  }
  return 'en';
}

function head(title: string, extra: string): string {
  return `<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer"><meta name="robots" content="noindex"><link rel="icon" href="data:,"><title>${escapeHtml(title)}</title><style>${EMBED_STYLE}</style>${extra}<script src="../embed-frame.js" defer></script>`;
}

/** The embed page of a public id: the element and nothing else. */
export function embedPageHtml(input: EmbedPageInput): string {
  const { options } = input;
  const attributes = [
    `query-id="${escapeHtml(input.id)}"`,
    `height="${options.height ?? DEFAULT_EMBED_HEIGHT}"`,
    'lazy="false"',
  ];
  if (options.range !== undefined) attributes.push(`range="${escapeHtml(options.range)}"`);
  if (options.theme !== undefined) attributes.push(`theme="${options.theme}"`);
  if (options.locale !== undefined) attributes.push(`locale="${escapeHtml(options.locale)}"`);
  if (input.endpoint !== undefined) attributes.push(`endpoint="${escapeHtml(input.endpoint)}"`);
  const discovery = input.oembedHref
    ? `<link rel="alternate" type="application/json+oembed" href="${escapeHtml(input.oembedHref)}" title="${escapeHtml(input.title)}">`
    : '';
  const lang = options.locale ?? input.lang ?? 'en';
  return `<!doctype html><html lang="${escapeHtml(lang)}"><head>${head(input.title, `${discovery}<script type="module" src="../${escapeHtml(input.bundleFile)}"></script>`)}</head><body><analytics-chart ${attributes.join(' ')}></analytics-chart></body></html>`;
}

/** The styled error state: a heading and the edge's sentence (English, as `lang` says), in the requested theme. */
export function embedErrorHtml(message: string, theme: EmbedOptions['theme']): string {
  return `<!doctype html><html lang="en" class="error ${theme ?? 'light'}"><head>${head('Chart unavailable', '')}</head><body><div class="message" role="alert"><strong>Chart unavailable</strong><span>${escapeHtml(message)}</span></div></body></html>`;
}
