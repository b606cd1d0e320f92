import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { HTTPException } from 'hono/http-exception';
import type { EdgeConfig } from './config/edge-config.ts';
import { resolveSettings } from './config/edge-config.ts';
import { EdgeError } from './http/edge-error.ts';
import {
  defaultClientIp,
  errorResponse,
  etagMatches,
  jsonResponse,
  methodNotAllowedResponse,
  notFoundResponse,
} from './http/respond.ts';
import { BUNDLE_SECURITY_HEADERS, withApiSecurityHeaders } from './http/security-headers.ts';
import { createLogger } from './log/logger.ts';
import { dataCors, framedDataCors } from './protection/data-cors.ts';
import { requestLimits } from './protection/request-limits.ts';
import { revocationList } from './protection/revocation.ts';
import { compileRegistry } from './registry/compile-definition.ts';
import { adminRoutes } from './routes/admin-routes.ts';
import { bundleAssets } from './routes/bundle-asset.ts';
import { dataRoute } from './routes/data-route.ts';
import { embedRoutes } from './routes/embed-routes.ts';
import { signRoutes } from './routes/sign-routes.ts';
import { sessionReader } from './session/session-check.ts';
import { type EdgeStore, LABEL_PATTERN } from './store/edge-store.ts';
import { memoryStore } from './store/memory-store.ts';
import { recordIssued } from './store/record-issued.ts';
import { embedTickets } from './tokens/embed-ticket.ts';
import { Keyring } from './tokens/keyring.ts';
import {
  createQuerySigner,
  SignError,
  type SignedQueryId,
  type SignQueryIdOptions,
} from './tokens/query-signer.ts';
import { parseSigningKeys, type SigningKey } from './tokens/signing-keys.ts';

/** A running edge: the Hono app to mount or serve, and the server-side controls. */
export interface Edge {
  /** Mount it (`hostApp.route('/analytics', edge.app)`) or serve it alone. */
  app: Hono;
  /**
   * Mints an id on the server, for hosts that render pages themselves, and records it in the
   * registry (minted by the subject, or `server` for public ids) with an optional label.
   */
  signQueryId(options: SignQueryIdOptions & { label?: string }): Promise<SignedQueryId>;
  /**
   * Revokes an id by its `jti` at once in this process, also for ids already remembered as
   * verified; resolves once the store (every replica sharing it) has it.
   */
  revoke(jti: string): Promise<void>;
  /** The edge's state (`store` of the config, else this process's memory). */
  store: EdgeStore;
  /** Replaces the signing keys (rotation without a restart); ids of removed kids stop working at once. */
  setSigningKeys(keys: readonly SigningKey[] | string): void;
  /** The content-hashed bundle file name (`analytics-chart.<hash>.js`), or null without a bundle. */
  bundleFileName(): Promise<string | null>;
  /** Forgets cached results and remembered ids. */
  clearCache(): void;
}

function startupError(message: string): Error {
  return new Error(`analytics edge: ${message}`);
}

/** The embed page's data route: `api/data` below an endpoint that carries the page's ticket. */
const FRAMED_DATA_ROUTE = '/embed-data/:ticket/api/data';

const BUNDLE_ROUTE = '/:file{analytics-chart(?:\\.[0-9a-f]{16})?\\.js}';

/**
 * Builds an edge from one config object and checks it before serving anything: missing or weak
 * signing secrets, a missing backend, a broken query definition or a bad setting throw an error
 * naming the culprit. Routes (relative to where the app is mounted): `GET /api/data`,
 * `POST /api/sign`, `POST /api/renew`, `GET /analytics-chart.js` (+ hashed name), `GET /health`,
 * and for CMS embeds `GET /embed/:id`, `GET /embed-data/:ticket/api/data` (the embed page's
 * data), `GET /oembed`, `GET /embed.js`, `GET /embed-frame.js`.
 */
export function createEdge(config: EdgeConfig): Edge {
  if (typeof config !== 'object' || config === null)
    throw startupError('createEdge needs a config object');
  if (config.signingKeys === undefined || config.signingKeys === '') {
    throw startupError(
      'signingKeys is missing: set EDGE_SIGNING_KEYS (run `npx analytics-edge keygen` to make a key)',
    );
  }
  if (!config.backend || typeof config.backend.query !== 'function') {
    throw startupError(
      'backend is missing: pass httpBackend({...}) or engineBackend(engine, {...})',
    );
  }
  if (typeof config.queries !== 'object' || config.queries === null) {
    throw startupError('queries is missing: the registry of named query definitions');
  }
  let keyring: Keyring;
  let registry: ReturnType<typeof compileRegistry>;
  let settings: ReturnType<typeof resolveSettings>;
  try {
    const keys =
      typeof config.signingKeys === 'string'
        ? parseSigningKeys(config.signingKeys)
        : config.signingKeys;
    keyring = new Keyring(
      keys,
      typeof config.signingKeys === 'string' ? 'EDGE_SIGNING_KEYS' : 'signingKeys',
    );
    registry = compileRegistry(config.queries);
    settings = resolveSettings(config);
    for (const origin of config.allowedOrigins ?? []) {
      if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) {
        throw new Error(
          `allowedOrigins: '${origin}' is not an origin such as https://app.example.com`,
        );
      }
    }
  } catch (error) {
    throw startupError((error as Error).message);
  }
  const logger = createLogger(config.log, config.backend.secrets ?? []);
  const keySecrets = (keys: readonly SigningKey[]) => logger.addSecrets(keys.map((k) => k.secret));
  keySecrets(
    typeof config.signingKeys === 'string'
      ? parseSigningKeys(config.signingKeys)
      : config.signingKeys,
  );

  const signer = createQuerySigner(keyring, registry, settings);
  const store = config.store ?? memoryStore();
  if (!config.store) {
    logger.log({
      level: 'info',
      event: 'store.memory',
      message:
        'state lives in this process: revocations, the id registry and rate limits are not shared with other replicas (pass store: redisStore(...) or set EDGE_REDIS_URL)',
    });
  }
  const limits = requestLimits(
    config.rateLimit?.store ?? store.rateLimits,
    settings,
    config.clientIp ?? defaultClientIp,
  );
  const revocation = revocationList(config.revokedIds ?? [], config.isRevoked, logger, store);
  const readSession = sessionReader(config.authorize, logger);
  const tickets = embedTickets(keyring);
  // Every route admits requests through the same steps, built from these parts.
  const shared = {
    settings,
    logger,
    keyring,
    registry,
    limits,
    revocation,
    store,
    readSession,
    tickets,
  };
  const corsForData = config.allowedOrigins?.length ? dataCors(config.allowedOrigins) : undefined;
  const corsForFramed = framedDataCors();
  const data = dataRoute({
    ...shared,
    backend: config.backend,
    cors: corsForData,
    framedCors: corsForFramed,
  });
  const { sign, renew } = signRoutes({ ...shared, signer });
  const bundle = bundleAssets(config.bundle);
  const embed = embedRoutes({ ...shared, bundle });
  const admin = adminRoutes({ ...shared, isAdmin: config.admin });
  const allowed = (config.allowedOrigins ?? []).filter((o) => o !== '*');

  /**
   * Every handler answers its own failures. No `app.onError`: Hono wraps each route of a mounted
   * app that has one in an extra async layer, which the synchronous hot path of the data route
   * would pay on every request.
   */
  const failure = (error: unknown, headers?: Readonly<Record<string, string>>): Response => {
    if (error instanceof EdgeError) return errorResponse(error, headers);
    if (error instanceof HTTPException) {
      return errorResponse(
        new EdgeError('bad_request', 'The request could not be read.', { status: error.status }),
        headers,
      );
    }
    logger.log({
      level: 'error',
      event: 'edge.bug',
      message: logger.scrub(String((error as Error)?.stack ?? error)),
    });
    return jsonResponse({ error: 'Something went wrong on our side.' }, 500, headers);
  };
  /** `handler` with its failures answered; `headersOf` adds headers to those answers. */
  const safe =
    (
      handler: (c: Context) => Response | Promise<Response>,
      headersOf?: (c: Context) => Readonly<Record<string, string>>,
    ) =>
    (c: Context): Response | Promise<Response> => {
      try {
        const response = handler(c);
        return response instanceof Promise
          ? response.catch((error: unknown) => failure(error, headersOf?.(c)))
          : response;
      } catch (error) {
        return failure(error, headersOf?.(c));
      }
    };

  const app = new Hono();
  app.notFound(notFoundResponse);

  const limitBody = bodyLimit({
    maxSize: settings.maxBodyBytes,
    onError: () =>
      errorResponse(
        new EdgeError(
          'bad_request',
          `The request body is larger than ${settings.maxBodyBytes} bytes.`,
          {
            status: 413,
          },
        ),
      ),
  });
  const signCors = cors({
    origin: (origin) => (allowed.includes(origin) ? origin : null),
    credentials: true,
    allowMethods: ['POST'],
    allowHeaders: ['Content-Type', 'Authorization'],
    maxAge: 600,
  });

  if (corsForData) {
    app.options('/api/data', (c) => corsForData.preflight(c.req.header('origin')));
  }
  /**
   * A 405 for the methods `path` does not serve, listed one by one rather than by `app.all`: a
   * request that matches a second handler leaves Hono's one-handler fast path, which every
   * served request would pay. (HEAD is dispatched as GET.)
   */
  const refuseOtherMethods = (
    path: string,
    allow: string,
    headersOf?: (c: Context) => Readonly<Record<string, string>>,
  ) => {
    const served = allow.split(', ');
    const refused = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].filter(
      (m) => !served.includes(m),
    );
    app.on(refused, path, (c) => methodNotAllowedResponse(allow, headersOf?.(c)));
  };

  const dataCorsHeaders =
    corsForData && ((c: Context) => corsForData.headersFor(c.req.header('origin')));
  app.get('/api/data', safe(data.handle, dataCorsHeaders));
  refuseOtherMethods(
    '/api/data',
    corsForData ? 'GET, HEAD, OPTIONS' : 'GET, HEAD',
    dataCorsHeaders,
  );
  const framedCorsHeaders = (c: Context) => corsForFramed.headersFor(c.req.header('origin'));
  app.options(FRAMED_DATA_ROUTE, (c) => corsForFramed.preflight(c.req.header('origin')));
  app.get(FRAMED_DATA_ROUTE, safe(data.framed, framedCorsHeaders));
  refuseOtherMethods(FRAMED_DATA_ROUTE, 'GET, HEAD, OPTIONS', framedCorsHeaders);
  app.use('/api/sign', withApiSecurityHeaders, signCors);
  app.use('/api/renew', withApiSecurityHeaders, signCors);
  app.post('/api/sign', limitBody, safe(sign));
  app.post('/api/renew', limitBody, safe(renew));
  refuseOtherMethods('/api/sign', 'POST, OPTIONS');
  refuseOtherMethods('/api/renew', 'POST, OPTIONS');
  app.use('/api/admin/*', withApiSecurityHeaders);
  app.get('/api/admin/ids', safe(admin.list));
  refuseOtherMethods('/api/admin/ids', 'GET, HEAD');
  app.get('/api/admin/ids/:jti', safe(admin.show));
  refuseOtherMethods('/api/admin/ids/:jti', 'GET, HEAD');
  app.post('/api/admin/ids/:jti/revoke', safe(admin.revoke));
  refuseOtherMethods('/api/admin/ids/:jti/revoke', 'POST');
  app.get('/health', () => jsonResponse({ ok: true }));
  refuseOtherMethods('/health', 'GET, HEAD');
  app.get(
    BUNDLE_ROUTE,
    safe(async (c) => {
      const asset = await bundle();
      const file = c.req.param('file');
      if (!asset || (file !== 'analytics-chart.js' && file !== asset.fileName)) {
        throw new EdgeError(
          'not_found',
          asset
            ? 'This version of the bundle is gone; reload the page.'
            : 'The chart bundle is not available.',
        );
      }
      const headers: Record<string, string> = {
        ...BUNDLE_SECURITY_HEADERS,
        'Content-Type': 'text/javascript; charset=utf-8',
        ETag: asset.etag,
        'Cache-Control':
          file === asset.fileName
            ? 'public, max-age=31536000, immutable'
            : 'public, max-age=0, must-revalidate',
      };
      const inm = c.req.header('if-none-match');
      if (inm !== undefined && etagMatches(inm, asset.etag)) {
        return new Response(null, { status: 304, headers });
      }
      return new Response(c.req.method === 'HEAD' ? null : asset.bytes, { status: 200, headers });
    }),
  );
  refuseOtherMethods(BUNDLE_ROUTE, 'GET, HEAD');
  app.get('/embed/:id', embed.page);
  refuseOtherMethods('/embed/:id', 'GET, HEAD');
  app.get('/oembed', embed.oembed);
  refuseOtherMethods('/oembed', 'GET, HEAD');
  app.get('/embed.js', embed.hostScript);
  refuseOtherMethods('/embed.js', 'GET, HEAD');
  app.get('/embed-frame.js', embed.frameScript);
  refuseOtherMethods('/embed-frame.js', 'GET, HEAD');

  return {
    app,
    signQueryId: async ({ label, ...options }) => {
      if (label !== undefined && !LABEL_PATTERN.test(label)) {
        throw new SignError(
          'bad_request',
          'label must be 1-200 characters of plain text (no control characters, < or >)',
        );
      }
      const signed = await signer.sign(options);
      await recordIssued(store, signed.claims, options.subject ?? 'server', label);
      return signed;
    },
    revoke: (jti) => revocation.revoke(jti),
    store,
    setSigningKeys: (keys) => {
      const list = typeof keys === 'string' ? parseSigningKeys(keys) : keys;
      keyring.replace(list);
      keySecrets(list);
    },
    bundleFileName: async () => (await bundle())?.fileName ?? null,
    clearCache: () => {
      data.clear();
      embed.clear();
    },
  };
}
