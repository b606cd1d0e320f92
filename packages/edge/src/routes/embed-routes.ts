import type { Context } from 'hono';
import { type Admission, type AdmissionParts, routeAdmission } from '../admission/admission.ts';
import type { EdgeSettings } from '../config/edge-config.ts';
import {
  DEFAULT_EMBED_HEIGHT,
  type EmbedOptions,
  MIN_EMBED_HEIGHT,
  parseEmbedOptions,
} from '../embed/embed-options.ts';
import {
  embedCsp,
  embedErrorHtml,
  embedPageHtml,
  embedStyleSource,
  frameAncestors,
  pageLanguage,
} from '../embed/embed-page.ts';
import { FRAME_SCRIPT, HOST_SCRIPT } from '../embed/embed-scripts.ts';
import { embedUrl, iframeHtml } from '../embed/embed-snippets.ts';
import { EdgeError } from '../http/edge-error.ts';
import { pipeline } from '../http/pipeline.ts';
import { errorResponse, jsonResponse } from '../http/respond.ts';
import { BUNDLE_SECURITY_HEADERS } from '../http/security-headers.ts';
import type { Logger } from '../log/logger.ts';
import type { CompiledDefinition } from '../registry/compile-definition.ts';
import type { IdMessages, VerifiedId } from '../tokens/verified-ids.ts';
import type { BundleAsset } from './bundle-asset.ts';

/** What a refused id's page says: to a reader of the page, and to the author who placed it. */
const PAGE_ID_MESSAGES: IdMessages = {
  invalid: 'This chart link is not valid. Copy the embed URL again from where the chart was made.',
  expired:
    'This chart link has expired. Ask for a new id (with a longer --ttl) and replace the URL.',
  tooLong: 'This chart link is not valid. Copy the embed URL again from where the chart was made.',
  unknownQuery: 'This chart no longer exists. Its query was removed from the analytics edge.',
  inlineOff: 'This chart link is not accepted here. This edge does not take inline definitions.',
};

/** The refusal of a session-bound id: a private resource, in oEmbed's terms (401). */
const SESSION_BOUND =
  'This chart is only for a signed-in viewer and cannot be embedded. Ask for a public id (--public).';

/** Width of an oEmbed answer when the consumer gives no `maxwidth`: a typical article column. */
const DEFAULT_OEMBED_WIDTH = 600;
const MAX_OEMBED_WIDTH = 4000;

const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  // A frame, not a resource: pages of any origin that `frame-ancestors` allows may embed it.
  'Cross-Origin-Resource-Policy': 'cross-origin',
  'Content-Type': 'text/html; charset=utf-8',
  // The page holds the id: never stored, so a revoked or expired id stops at the next load.
  'Cache-Control': 'no-store',
};

/** oEmbed answers are public: editors in any origin's browser may read them with a CORS fetch. */
const OEMBED_HEADERS: Readonly<Record<string, string>> = { 'Access-Control-Allow-Origin': '*' };

/** The embed routes' handlers, mounted by `createEdge`. */
export interface EmbedRoutes {
  page(c: Context): Promise<Response>;
  oembed(c: Context): Promise<Response>;
  hostScript(c: Context): Response;
  frameScript(c: Context): Response;
  /** Forgets remembered ids. */
  clear(): void;
}

/** What the embed routes are built from. */
export interface EmbedRouteParts extends AdmissionParts {
  settings: EdgeSettings;
  logger: Logger;
  registry: ReadonlyMap<string, CompiledDefinition>;
  /** The chart bundle the embed page loads. */
  bundle: () => Promise<BundleAsset | null>;
}

/** An embed page or oEmbed request: the admission's fields and the id the URL names. */
interface EmbedRequest extends Admission {
  readonly token: string;
}

/**
 * The embed routes: `GET /embed/:id` (the chart page, for iframes), `GET /oembed` (the oEmbed
 * endpoint), `GET /embed.js` (the host page's optional resize script) and `GET /embed-frame.js`
 * (the embed page's height reporter). An id is admitted by the data route's own steps: per-IP
 * limit, signature and expiry, every id check, per-id limit in the data route's own bucket; and
 * it must be public. oEmbed also refuses a site outside the id's audience when the asker names it.
 */
export function embedRoutes(parts: EmbedRouteParts): EmbedRoutes {
  const { settings, logger, limits, tickets, bundle } = parts;

  const tokenOf = (request: EmbedRequest) => request.token;
  const pageAdmission = routeAdmission<EmbedRequest>(parts, {
    event: 'embed.denied',
    messages: PAGE_ID_MESSAGES,
    tokenOf,
  });
  const oembedAdmission = routeAdmission<EmbedRequest>(parts, {
    event: 'oembed.denied',
    messages: PAGE_ID_MESSAGES,
    tokenOf,
  });
  const admitted = (request: EmbedRequest) => request.verified;
  const admitPage = pipeline<EmbedRequest, VerifiedId>(
    [
      pageAdmission.limitClient,
      ...pageAdmission.admitId,
      pageAdmission.requirePublic(SESSION_BOUND),
      pageAdmission.limitId,
    ],
    admitted,
  );
  const admitOembed = pipeline<EmbedRequest, VerifiedId>(
    [
      oembedAdmission.limitClient,
      ...oembedAdmission.admitId,
      oembedAdmission.requirePublic(SESSION_BOUND, 401),
      oembedAdmission.limitId,
      oembedAdmission.checkAskingSite,
    ],
    admitted,
  );
  const newRequest = (c: Context, token: string): EmbedRequest =>
    ({ c, nowMs: Date.now(), token, verified: undefined }) as unknown as EmbedRequest;

  /** Anything that is not an EdgeError is a bug: logged, and answered without detail. */
  function asEdgeError(error: unknown): EdgeError {
    if (error instanceof EdgeError) return error;
    logger.log({
      level: 'error',
      event: 'edge.bug',
      message: logger.scrub(String((error as Error)?.stack ?? error)),
    });
    return new EdgeError('backend', 'Something went wrong on our side.', { status: 500 });
  }

  function titleOf(compiled: CompiledDefinition): string {
    return compiled.definition.title ?? 'Chart';
  }

  /** `GET /embed/:id`: the chart page, or the styled error page with the error's status. */
  async function page(c: Context): Promise<Response> {
    const search = new URL(c.req.url).searchParams;
    const id = c.req.param('id') ?? '';
    const request = newRequest(c, id);
    const styleSource = await embedStyleSource();
    const theme = search.get('theme');
    const errorTheme: EmbedOptions['theme'] =
      theme === 'dark' || theme === 'auto' || theme === 'light' ? theme : undefined;
    try {
      const admitted = await admitPage(request);
      const options = parseEmbedOptions(search, admitted.compiled.rangeKeys);
      if (!options.ok) throw new EdgeError('bad_request', options.error);
      const asset = await bundle();
      if (!asset) throw new EdgeError('not_found', 'Charts are not available here.');
      // The page's own data request may come from a sandboxed frame (`Origin: null`): it
      // carries this ticket, so it needs neither the id's audience nor the host's CORS.
      const ticket = await tickets.mint(admitted.claims.jti, limits.address(c), request.nowMs);
      const html = embedPageHtml({
        id,
        title: titleOf(admitted.compiled),
        options: options.value,
        bundleFile: asset.fileName,
        lang: pageLanguage(c.req.header('accept-language')),
        endpoint: `../embed-data/${ticket}/`,
        ...(settings.publicUrl
          ? {
              oembedHref: `${settings.publicUrl}/oembed?url=${encodeURIComponent(embedUrl(settings.publicUrl, id, options.value))}&format=json`,
            }
          : {}),
      });
      return new Response(c.req.method === 'HEAD' ? null : html, {
        status: 200,
        headers: {
          ...PAGE_HEADERS,
          'Content-Security-Policy': embedCsp(frameAncestors(admitted.audience), styleSource),
        },
      });
    } catch (caught) {
      const error = asEdgeError(caught);
      // A good signature's audience still holds for its error page.
      const audience = request.verified?.audience;
      const headers: Record<string, string> = {
        ...PAGE_HEADERS,
        // An error page says nothing about the chart, so any page may show why it has none.
        'Content-Security-Policy': embedCsp(frameAncestors(audience), styleSource),
      };
      if (error.retryAfter !== undefined) headers['Retry-After'] = String(error.retryAfter);
      return new Response(
        c.req.method === 'HEAD' ? null : embedErrorHtml(error.message, errorTheme),
        {
          status: error.status,
          headers,
        },
      );
    }
  }

  /** A whole number of pixels from an oEmbed size parameter, or undefined without one. */
  function size(search: URLSearchParams, name: string): number | undefined {
    const value = search.get(name);
    if (value === null) return undefined;
    if (!/^[1-9][0-9]{0,4}$/.test(value)) {
      throw new EdgeError('bad_request', `${name} is a whole number of pixels.`);
    }
    return Number(value);
  }

  /** The id and the options of one of this edge's embed URLs, or a 404. */
  function embedTarget(url: string | null, publicUrl: string) {
    const notOurs = new EdgeError('not_found', 'That URL is not a chart of this edge.');
    if (url === null) throw new EdgeError('bad_request', 'Give the url of a chart.');
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw notOurs;
    }
    const base = new URL(`${publicUrl}/embed/`);
    if (target.origin !== base.origin || !target.pathname.startsWith(base.pathname)) throw notOurs;
    const rest = target.pathname.slice(base.pathname.length);
    if (rest === '' || rest.includes('/')) throw notOurs;
    let id: string;
    try {
      id = decodeURIComponent(rest);
    } catch {
      throw notOurs;
    }
    return { id, search: target.searchParams };
  }

  /**
   * `GET /oembed?url=…&format=json[&maxwidth=…&maxheight=…]` (oEmbed 1.0): a `rich` answer with
   * the iframe. 404 for a URL this edge does not serve (another address, or an id that is
   * invalid, expired or revoked), 401 for a session-bound id (a private resource), 501 for a
   * format other than JSON.
   */
  async function oembed(c: Context): Promise<Response> {
    try {
      const search = new URL(c.req.url).searchParams;
      const format = search.get('format');
      if (format !== null && format !== 'json') {
        throw new EdgeError('bad_request', 'Only format=json is served.', { status: 501 });
      }
      const publicUrl = settings.publicUrl;
      if (!publicUrl) {
        throw new EdgeError(
          'not_found',
          'This edge has no public URL set, so it serves no oEmbed.',
        );
      }
      const maxWidth = size(search, 'maxwidth');
      const maxHeight = size(search, 'maxheight');
      const { id, search: optionSearch } = embedTarget(search.get('url'), publicUrl);
      let admitted: VerifiedId;
      try {
        admitted = await admitOembed(newRequest(c, id));
      } catch (error) {
        // oEmbed's terms: a URL with no chart behind it (forged, expired, revoked, refused) is a
        // 404; a private one (401) and a site the id excludes (403) say why.
        if (
          error instanceof EdgeError &&
          (error.code === 'invalid' ||
            error.code === 'expired' ||
            (error.code === 'forbidden' && error.message === PAGE_ID_MESSAGES.inlineOff))
        ) {
          throw new EdgeError('not_found', 'There is no chart at that URL.');
        }
        throw error;
      }
      const parsed = parseEmbedOptions(optionSearch, admitted.compiled.rangeKeys);
      if (!parsed.ok)
        throw new EdgeError('not_found', `There is no chart at that URL: ${parsed.error}`);
      const options = { ...parsed.value };
      let height = options.height ?? DEFAULT_EMBED_HEIGHT;
      if (maxHeight !== undefined && height > maxHeight) {
        if (maxHeight < MIN_EMBED_HEIGHT) {
          throw new EdgeError(
            'not_found',
            `A chart needs at least ${MIN_EMBED_HEIGHT} pixels of height.`,
          );
        }
        height = maxHeight;
        options.height = height;
      }
      const width = Math.min(maxWidth ?? DEFAULT_OEMBED_WIDTH, MAX_OEMBED_WIDTH);
      const title = titleOf(admitted.compiled);
      const now = Math.floor(Date.now() / 1000);
      return jsonResponse(
        {
          version: '1.0',
          type: 'rich',
          title,
          provider_name: 'analytics-chart',
          provider_url: publicUrl,
          cache_age: Math.max(0, Math.min(admitted.claims.exp - now, 86_400)),
          html: iframeHtml({ src: embedUrl(publicUrl, id, options), title, width, height }),
          width,
          height,
        },
        200,
        OEMBED_HEADERS,
      );
    } catch (error) {
      return errorResponse(asEdgeError(error), OEMBED_HEADERS);
    }
  }

  const scriptHeaders = {
    ...BUNDLE_SECURITY_HEADERS,
    'Content-Type': 'text/javascript; charset=utf-8',
    'Cache-Control': 'public, max-age=3600',
  };
  const script =
    (text: string) =>
    (c: Context): Response =>
      new Response(c.req.method === 'HEAD' ? null : text, { status: 200, headers: scriptHeaders });

  return {
    page,
    oembed,
    hostScript: script(HOST_SCRIPT),
    frameScript: script(FRAME_SCRIPT),
    clear: () => {
      pageAdmission.ids.clear();
      oembedAdmission.ids.clear();
    },
  };
}
