import type { Context } from 'hono';
import * as z from 'zod';
import type { EdgeSettings } from '../config/edge-config.ts';
import { MAX_EMBED_HEIGHT, MIN_EMBED_HEIGHT } from '../embed/embed-options.ts';
import { embedUrl, snippetsFor } from '../embed/embed-snippets.ts';
import { EdgeError } from '../http/edge-error.ts';
import { readJsonBody } from '../http/read-json-body.ts';
import { jsonResponse } from '../http/respond.ts';
import type { Logger } from '../log/logger.ts';
import type { RequestLimits } from '../protection/request-limits.ts';
import type { Revocation } from '../protection/revocation.ts';
import type { CompiledDefinition } from '../registry/compile-definition.ts';
import type { BundleAsset } from '../routes/bundle-asset.ts';
import type { Session } from '../session/session.ts';
import type { ReadSession } from '../session/session-check.ts';
import { type EdgeStore, type IssuedId, JTI_PATTERN, LABEL_PATTERN } from '../store/edge-store.ts';
import { fromStore as fromStoreOr503 } from '../store/from-store.ts';
import { recordIssued } from '../store/record-issued.ts';
import { parseTtl } from '../tokens/parse-ttl.ts';
import { type QuerySigner, SignError } from '../tokens/query-signer.ts';
import { STUDIO_HEADERS, studioPageHtml, studioRefusalHtml } from './studio-page.ts';
import { StudioParamError, studioParams, studioParamsOf } from './studio-params.ts';
import type { StudioRule } from './studio-rule.ts';
import { STUDIO_SCRIPT } from './studio-script.ts';
import { placedSnippets } from './studio-snippets.ts';
import { STUDIO_STYLE } from './studio-style.ts';

/** The registry's `mintedBy` of studio ids: the prefix keeps a subject from matching `cli` or `server`. */
export const STUDIO_MINTER_PREFIX = 'studio:';

/**
 * Who minted a studio id, as the registry records it: `studio:<subject>`, or for a session with a
 * tenant `studio@<tenant, URI-encoded>:<subject>`, so one subject string in two tenants names two
 * owners, and no subject can spell another tenant's owner (`@` never follows the `studio` of a
 * session without one).
 */
export function studioMinter(session: Session): string {
  if (session.tenant === undefined) return `${STUDIO_MINTER_PREFIX}${session.subject}`;
  return `studio@${encodeURIComponent(String(session.tenant))}:${session.subject}`;
}

/** Longest lifetime a studio embed may be given. */
const MAX_STUDIO_TTL = 366 * 86_400;
/** Most embeds one user's list shows, newest first (the registry keeps the rest). */
const MAX_LISTED = 1000;

const ORIGIN = /^https?:\/\/(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

const paramValue = z.union([z.string().max(200), z.number(), z.boolean()]);
const chartFields = {
  query: z.string({ error: 'expected the name of a chart' }).min(1).max(200),
  params: z.record(z.string().max(64), paramValue).optional(),
};

const previewSchema = z.strictObject(chartFields);

const mintSchema = z.strictObject({
  ...chartFields,
  label: z.string({ error: 'give the embed a label' }).regex(LABEL_PATTERN, {
    error: 'label must be 1-200 characters of plain text (no control characters, < or >)',
  }),
  ttl: z.string().regex(/^[1-9]\d{0,2}[dw]$/, { error: 'ttl is a lifetime such as 30d' }),
  aud: z
    .array(
      z.string().regex(ORIGIN, { error: 'each site is an origin such as https://blog.example' }),
    )
    .max(20, { error: 'list at most 20 sites' })
    .optional(),
  options: z
    .strictObject({
      range: z.string().min(1).max(32).optional(),
      theme: z.enum(['light', 'dark', 'auto']).optional(),
      height: z.number().int().min(MIN_EMBED_HEIGHT).max(MAX_EMBED_HEIGHT).optional(),
      locale: z
        .string()
        .max(35)
        .refine(
          (value) => {
            try {
              return Intl.getCanonicalLocales(value).length === 1;
            } catch {
              return false;
            }
          },
          { error: 'locale is a language tag such as en-GB' },
        )
        .optional(),
      refresh: z.number().int().min(0).max(86_400).optional(),
    })
    .optional(),
});

/** What the studio's routes are built from. */
export interface StudioRouteParts {
  settings: EdgeSettings;
  logger: Logger;
  registry: ReadonlyMap<string, CompiledDefinition>;
  signer: QuerySigner;
  limits: RequestLimits;
  revocation: Revocation;
  readSession: ReadSession;
  store: EdgeStore;
  rule: StudioRule;
  /** The chart bundle the preview loads. */
  bundle: () => Promise<BundleAsset | null>;
}

/** A static text file of the studio, under the page's headers (it holds no user data). */
function asset(text: string, type: string) {
  return (c: Context): Response =>
    new Response(c.req.method === 'HEAD' ? null : text, {
      status: 200,
      headers: { ...STUDIO_HEADERS, 'Content-Type': type, 'Cache-Control': 'no-cache' },
    });
}

/** An embed as the studio lists it: the registry entry without who minted it (always the caller). */
export type StudioEmbed = Omit<IssuedId, 'mintedBy' | 'public'>;

/**
 * The studio's JSON API for the signed-in session the config's studio rule admits:
 * `GET /api/studio/charts`, `POST /api/studio/preview`, `GET|POST /api/studio/embeds`,
 * `POST /api/studio/embeds/:jti/revoke`. 401 without a session, 403 for anyone else; each
 * session sees and revokes only the embeds it minted, in its own tenant.
 */
export function studioRoutes(parts: StudioRouteParts) {
  const { settings, logger, registry, signer, limits, revocation, readSession, store, rule } =
    parts;
  const { bundle } = parts;
  const offered = (rule.queries ?? [...registry.keys()]).filter((name) => registry.has(name));

  /** The stages every studio request passes: the address's limit, a session, the rule. */
  async function admit(c: Context): Promise<Session> {
    await limits.client(c, Date.now());
    const session = await readSession(c);
    if (!session) throw new EdgeError('forbidden', 'Sign in first.', { status: 401 });
    if (!(await rule.allow(session))) {
      logger.log({ level: 'warn', event: 'studio.denied', message: 'the studio rule refused' });
      throw new EdgeError('forbidden', 'Your account may not publish charts.');
    }
    return session;
  }

  /** A store that cannot answer is a 503 the caller may retry, never a stack trace. */
  const fromStore = <T>(work: () => Promise<T>) =>
    fromStoreOr503(
      logger,
      'studio.store_failed',
      'The registry of embeds is unavailable; try again shortly.',
      work,
    );

  /** The offered chart a request names, with its locked parameters for this session. */
  async function chartOf(session: Session, body: z.infer<typeof previewSchema>) {
    const compiled = offered.includes(body.query) ? registry.get(body.query) : undefined;
    if (!compiled) throw new EdgeError('not_found', 'There is no such chart in the studio.');
    try {
      return { compiled, params: await studioParams(compiled, session, body.params ?? {}) };
    } catch (error) {
      if (!(error instanceof StudioParamError)) throw error;
      if (error.status === 403) {
        logger.log({ level: 'warn', event: 'studio.denied', message: `${body.query}: params` });
      }
      throw new EdgeError(error.status === 403 ? 'forbidden' : 'bad_request', error.message);
    }
  }

  /** Signs through the edge's one signer; its refusals become the usual JSON errors. */
  async function sign(options: Parameters<QuerySigner['sign']>[0]) {
    try {
      return await signer.sign(options);
    } catch (error) {
      if (!(error instanceof SignError)) throw error;
      throw new EdgeError(
        error.kind,
        `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`,
      );
    }
  }

  /** Whether a registry entry is one of this session's studio embeds: same subject, same tenant. */
  function owns(session: Session, entry: IssuedId): boolean {
    return entry.public && entry.mintedBy === studioMinter(session);
  }

  function asEmbed({ mintedBy: _m, public: _p, ...entry }: IssuedId): StudioEmbed {
    return entry;
  }

  return {
    /** The charts this session may publish, with their parameters and ranges. */
    async charts(c: Context): Promise<Response> {
      const session = await admit(c);
      const charts = [];
      for (const name of offered) {
        const compiled = registry.get(name) as CompiledDefinition;
        const params = await studioParamsOf(compiled, session);
        if (!params) continue;
        charts.push({
          name,
          title: compiled.definition.title ?? name,
          graph: compiled.graph,
          params,
          ranges: compiled.rangeKeys.map((key) => ({
            key,
            label: compiled.definition.ranges?.[key]?.label ?? key,
          })),
          defaultRange: compiled.defaultRange,
        });
      }
      return jsonResponse({ subject: session.subject, charts });
    },

    /** A session-bound id for the preview: it draws only for this session, and is not listed. */
    async preview(c: Context): Promise<Response> {
      const session = await admit(c);
      const body = await readJsonBody(c, previewSchema);
      const { params } = await chartOf(session, body);
      const signed = await sign({ query: body.query, params, subject: session.subject });
      return jsonResponse({ id: signed.id, expiresAt: signed.expiresAt });
    },

    /** Mints a public id, records it with its label, and answers its snippets. */
    async mint(c: Context): Promise<Response> {
      const session = await admit(c);
      const body = await readJsonBody(c, mintSchema);
      const { compiled, params } = await chartOf(session, body);
      const ttl = parseTtl(body.ttl);
      if (ttl === null || ttl > MAX_STUDIO_TTL) {
        throw new EdgeError('bad_request', 'An embed lives at most 366 days.');
      }
      const { refresh, ...options } = body.options ?? {};
      if (options.range !== undefined && !compiled.rangeKeys.includes(options.range)) {
        throw new EdgeError('bad_request', `This chart has no range '${options.range}'.`);
      }
      const aud = [...new Set(body.aud ?? [])].map((origin) => new URL(origin).origin);
      const signed = await sign({
        query: body.query,
        params,
        public: true,
        ttl,
        ...(aud.length ? { audience: aud } : {}),
      });
      await fromStore(() => recordIssued(store, signed.claims, studioMinter(session), body.label));
      logger.log({
        level: 'info',
        event: 'studio.minted',
        message: `minted ${body.query}`,
        id: signed.jti,
      });
      const base = settings.publicUrl as string;
      const title = compiled.definition.title ?? 'Chart';
      const snippets = snippetsFor({
        base,
        id: signed.id,
        title,
        options,
        ...(refresh ? { refresh } : {}),
      });
      return jsonResponse(
        {
          jti: signed.jti,
          expiresAt: signed.expiresAt,
          url: embedUrl(base, signed.id, options),
          snippets: placedSnippets(snippets, title, aud.length > 0),
        },
        201,
      );
    },

    /** This session's embeds, newest first, from the registry's index of their minter. */
    async list(c: Context): Promise<Response> {
      const session = await admit(c);
      const mintedBy = studioMinter(session);
      const items: StudioEmbed[] = [];
      let cursor: string | undefined;
      do {
        const page = await fromStore(() => store.list(cursor, 100, { mintedBy }));
        for (const entry of page.items) if (owns(session, entry)) items.push(asEmbed(entry));
        cursor = page.next;
      } while (cursor !== undefined && items.length < MAX_LISTED);
      return jsonResponse({ items: items.slice(0, MAX_LISTED) });
    },

    /** Revokes one of this session's embeds everywhere; another's is a 404, as if absent. */
    async revoke(c: Context): Promise<Response> {
      const session = await admit(c);
      if (!/^application\/json\b/i.test(c.req.header('content-type') ?? '')) {
        throw new EdgeError('bad_request', 'Send the request as application/json.', {
          status: 415,
        });
      }
      const jti = c.req.param('jti') ?? '';
      if (!JTI_PATTERN.test(jti)) throw new EdgeError('bad_request', 'That is not an embed id.');
      const entry = await fromStore(() => store.get(jti));
      if (!entry || !owns(session, entry)) {
        logger.log({ level: 'warn', event: 'studio.denied', message: 'not the minter', id: jti });
        throw new EdgeError('not_found', 'You have no embed by that id.');
      }
      await fromStore(() => revocation.revoke(jti));
      logger.log({ level: 'info', event: 'studio.revoked', message: 'revoked', id: jti });
      return jsonResponse({ jti, revoked: true });
    },

    /** `GET /studio`: the page, or a page saying why not (signed out, not admitted). */
    async page(c: Context): Promise<Response> {
      const headers = { ...STUDIO_HEADERS, 'Content-Type': 'text/html; charset=utf-8' };
      const refuse = (status: number, message: string) =>
        new Response(c.req.method === 'HEAD' ? null : studioRefusalHtml(message), {
          status,
          headers,
        });
      try {
        await admit(c);
      } catch (error) {
        if (!(error instanceof EdgeError)) throw error;
        return refuse(
          error.status,
          error.status === 401
            ? 'Sign in to the site first, then open this page again.'
            : error.message,
        );
      }
      const asset = await bundle();
      if (!asset) return refuse(404, 'Charts are not available here: the edge serves no bundle.');
      return new Response(c.req.method === 'HEAD' ? null : studioPageHtml(asset.fileName), {
        status: 200,
        headers,
      });
    },

    /** `GET /studio.js`: the page's script. */
    script: asset(STUDIO_SCRIPT, 'text/javascript; charset=utf-8'),
    /** `GET /studio.css`: the page's stylesheet. */
    style: asset(STUDIO_STYLE, 'text/css; charset=utf-8'),
  };
}

/** The studio's API handlers. */
export type StudioRoutes = ReturnType<typeof studioRoutes>;
