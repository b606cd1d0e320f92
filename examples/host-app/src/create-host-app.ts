import type { Edge, QueryDefinition } from '@analytics-chart/edge';
import { type Context, Hono } from 'hono';
import { csrf } from 'hono/csrf';
import { HTTPException } from 'hono/http-exception';
import * as z from 'zod';
import { loadAssets } from './assets.ts';
import {
  DASHBOARD_LAYOUT,
  DASHBOARD_RANGES,
  type DashboardChart,
  DEFAULT_DASHBOARD_RANGE,
} from './dashboard-queries.ts';
import { EDGE_QUERIES } from './edge-queries.ts';
import { dashboardPage, type RenderedChart } from './pages/dashboard-page.ts';
import { loginPage, messagePage } from './pages/login-page.ts';
import { hostSecurityHeaders } from './security-headers.ts';
import {
  endSession,
  type SessionSettings,
  sessionReader,
  startSession,
  userOf,
} from './session-cookie.ts';
import type { HostUser, UserStore } from './users.ts';

/** How the host app is put together. */
export interface HostAppOptions {
  /** The edge, created with `hostEdgeConfig` (same registry, same session check). */
  edge: Edge;
  session: SessionSettings;
  users: UserStore;
  /** Where the edge is mounted. @default '/analytics' */
  edgePath?: string;
  /** The edge has an embed studio (a `studio` rule): the dashboard links to it. @default false */
  studio?: boolean;
  /** Lifetime of the ids minted for each dashboard view. @default '10m' */
  idTtl?: string | number;
  /** The registry the edge was given (for each chart's allowed ranges). @default EDGE_QUERIES */
  queries?: Readonly<Record<string, QueryDefinition>>;
  /** The charts, top to bottom. @default DASHBOARD_LAYOUT */
  layout?: readonly DashboardChart[];
  /** Demo accounts listed on the login page. */
  loginHint?: { logins: readonly string[]; password: string };
  /** Where the host reports its own failures (never with secrets). @default console.error */
  logError?: (message: string) => void;
  /**
   * The host app's own origin, from configuration (`https://app.example.com`): sign-in and
   * sign-out posts must come from it. Without it they are checked against the request's own URL,
   * which trusts the `Host` header.
   */
  origin?: string | readonly string[];
}

const rangeQuery = z
  .string()
  .refine((key) => Object.hasOwn(DASHBOARD_RANGES, key))
  .default(DEFAULT_DASHBOARD_RANGE);

const loginForm = z.object({
  login: z.string().trim().min(1).max(200),
  password: z.string().min(1).max(200),
});

/**
 * The demo host app: sign-in with cookie sessions, a dashboard of charts for the signed-in
 * user's tenant with ids minted here per view, and the edge mounted at `edgePath` so the
 * element, its data and id renewal are all same-origin. Server-rendered HTML under a strict CSP.
 */
export function createHostApp(options: HostAppOptions): Hono {
  const { edge, session, users } = options;
  const edgePath = options.edgePath ?? '/analytics';
  const idTtl = options.idTtl ?? '10m';
  const queries = options.queries ?? EDGE_QUERIES;
  const charts = options.layout ?? DASHBOARD_LAYOUT;
  const logError = options.logError ?? ((message: string) => console.error(`host-app: ${message}`));
  const readSession = sessionReader(session);
  const assets = loadAssets();
  const app = new Hono();

  const currentUser = async (c: Context): Promise<HostUser | null> => userOf(await readSession(c));
  const isEdgePath = (path: string) => path === edgePath || path.startsWith(`${edgePath}/`);

  // The edge's routes keep the edge's own headers (its bundle must load on other origins too).
  const headers = hostSecurityHeaders({ https: session.secure });
  app.use('*', (c, next) => (isEdgePath(c.req.path) ? next() : headers(c, next)));
  // Sign-in and sign-out are form posts: refuse them from other origins.
  const sameSite = csrf(options.origin === undefined ? {} : { origin: [options.origin].flat() });
  app.use('/login', sameSite);
  app.use('/logout', sameSite);

  app.route(edgePath, edge.app);

  app.get('/health', (c) => c.json({ ok: true }));
  app.get('/favicon.ico', (c) => c.body(null, 204));

  app.get('/assets/:name', (c) => {
    const asset = assets.get(c.req.param('name'));
    if (!asset) return c.html(messagePage('Not found', 'There is nothing here.'), 404);
    const headers = { 'Content-Type': asset.type, ETag: asset.etag, 'Cache-Control': 'no-cache' };
    if (c.req.header('if-none-match') === asset.etag) return c.body(null, 304, headers);
    return c.body(asset.bytes, 200, headers);
  });

  app.get('/', async (c) => c.redirect((await currentUser(c)) ? '/dashboard' : '/login', 303));

  app.get('/login', async (c) => {
    if (await currentUser(c)) return c.redirect('/dashboard', 303);
    return c.html(loginPage(options.loginHint ? { hint: options.loginHint } : {}));
  });

  app.post('/login', async (c) => {
    const form = loginForm.safeParse(await c.req.parseBody());
    const user = form.success ? await users.verify(form.data.login, form.data.password) : null;
    if (!user) {
      return c.html(
        loginPage({
          error: 'That login and password do not match.',
          login: form.success ? form.data.login : '',
          ...(options.loginHint ? { hint: options.loginHint } : {}),
        }),
        401,
      );
    }
    await startSession(c, user, session);
    return c.redirect('/dashboard', 303);
  });

  app.post('/logout', (c) => {
    endSession(c, session);
    return c.redirect('/login', 303);
  });

  app.get('/dashboard', async (c) => {
    const user = await currentUser(c);
    if (!user) return c.redirect('/login', 303);
    // An unknown range (an old bookmark, a typo) opens the default rather than failing.
    const range = rangeQuery.catch(DEFAULT_DASHBOARD_RANGE).parse(c.req.query('range'));
    const rendered: RenderedChart[] = await Promise.all(
      charts.map(async (chart) => {
        const name = chart.query;
        // Minted here, for this session's subject and tenant only, with a short lifetime; the
        // element renews it through the edge's /api/renew (which checks this same session).
        const { id } = await edge.signQueryId({
          query: name,
          subject: user.login,
          params: { tenant: user.tenant },
          ttl: idTtl,
        });
        return {
          queryId: id,
          name,
          size: chart.size,
          height: chart.height,
          ranges: Object.keys(queries[name]?.ranges ?? {}),
        };
      }),
    );
    const bundle = (await edge.bundleFileName()) ?? 'analytics-chart.js';
    c.header('Cache-Control', 'no-store');
    return c.html(
      dashboardPage({
        user,
        charts: rendered,
        ranges: DASHBOARD_RANGES,
        range,
        bundleSrc: `${edgePath}/${bundle}`,
        ...(options.studio ? { studioHref: `${edgePath}/studio` } : {}),
      }),
    );
  });

  app.notFound((c) =>
    isEdgePath(c.req.path)
      ? c.json({ error: 'There is nothing here.' }, 404)
      : c.html(messagePage('Not found', 'There is nothing here.'), 404),
  );

  app.onError((error, c) => {
    if (error instanceof HTTPException && error.status === 403) {
      return c.html(messagePage('Refused', 'That form was sent from another site.'), 403);
    }
    if (error instanceof HTTPException && error.status < 500) {
      return c.html(messagePage('Bad request', 'The request could not be read.'), error.status);
    }
    logError(`${c.req.method} ${c.req.path} failed: ${(error as Error).message}`);
    return c.html(messagePage('Something went wrong', 'Please try again in a moment.'), 500);
  });

  return app;
}
