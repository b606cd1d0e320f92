/**
 * One admission pipeline: the data route (bearer and framed), the embed page, oEmbed and renew
 * build their checks from the same steps. A check added to the shared list runs, and refuses, on
 * every one of them; a revoked id is refused by each through the one revocation step.
 */
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Admission, AdmissionParts } from '../src/admission/admission.ts';
import { engineBackend } from '../src/backend/engine-backend.ts';
import { resolveSettings } from '../src/config/edge-config.ts';
import { EdgeError } from '../src/http/edge-error.ts';
import type { Step } from '../src/http/pipeline.ts';
import { createLogger, type LogEntry } from '../src/log/logger.ts';
import { framedDataCors } from '../src/protection/data-cors.ts';
import { requestLimits } from '../src/protection/request-limits.ts';
import { revocationList } from '../src/protection/revocation.ts';
import { compileRegistry } from '../src/registry/compile-definition.ts';
import type { QueryDefinition } from '../src/registry/query-definition.ts';
import { bundleAssets } from '../src/routes/bundle-asset.ts';
import { dataRoute } from '../src/routes/data-route.ts';
import { embedRoutes } from '../src/routes/embed-routes.ts';
import { signRoutes } from '../src/routes/sign-routes.ts';
import { sessionReader } from '../src/session/session-check.ts';
import { memoryStore } from '../src/store/memory-store.ts';
import { embedTickets } from '../src/tokens/embed-ticket.ts';
import { Keyring } from '../src/tokens/keyring.ts';
import { createQuerySigner } from '../src/tokens/query-signer.ts';
import { generateSigningKey } from '../src/tokens/signing-keys.ts';
import { type AnalyticsBackend, startAnalyticsBackend } from './support/analytics-backend.ts';

const API_KEY = 'admission-key-0123456789';
const BLOG = 'https://blog.example.com';
const PUBLIC_URL = 'https://charts.example.com';
const QUERIES: Record<string, QueryDefinition> = {
  total: { query: { graph_type: 'Single Value', start: '30 days ago', end: 'now' } },
};

/** The routes as `createEdge` mounts them, built with `idChecks` added to the shared list. */
function buildRoutes(backend: AnalyticsBackend, idChecks: readonly Step<Admission>[]) {
  const config = {
    signingKeys: [generateSigningKey()],
    backend: engineBackend(backend.engine, { apiKey: API_KEY }),
    queries: QUERIES,
    publicUrl: PUBLIC_URL,
    ids: { renewGrace: '1h' },
  };
  const settings = resolveSettings(config);
  const logs: LogEntry[] = [];
  const logger = createLogger((entry) => logs.push(entry));
  const keyring = new Keyring(config.signingKeys);
  const registry = compileRegistry(QUERIES);
  const store = memoryStore();
  const limits = requestLimits(store.rateLimits, settings, () => '10.0.0.1');
  const revocation = revocationList([], undefined, logger, store);
  const parts: AdmissionParts = {
    settings,
    logger,
    keyring,
    registry,
    limits,
    revocation,
    readSession: sessionReader((c) => {
      const subject = c.req.header('x-user');
      return subject ? { subject } : null;
    }, logger),
    tickets: embedTickets(keyring),
    idChecks,
  };
  const data = dataRoute({
    ...parts,
    backend: config.backend,
    store,
    framedCors: framedDataCors(),
  });
  const embed = embedRoutes({ ...parts, bundle: bundleAssets('export {};\n') });
  const signer = createQuerySigner(keyring, registry, settings);
  const { renew } = signRoutes({ ...parts, signer, store });
  const app = new Hono();
  app.get('/api/data', data.handle);
  app.get('/embed-data/:ticket/api/data', data.framed);
  app.get('/embed/:id', embed.page);
  app.get('/oembed', embed.oembed);
  app.post('/api/renew', renew);
  app.onError((error) =>
    error instanceof EdgeError
      ? Response.json({ error: error.message, code: error.code }, { status: error.status })
      : Response.json({ error: 'bug' }, { status: 500 }),
  );
  return { app, signer, revocation, logs };
}

/** One request to each route that takes an id; the answers' statuses by route. */
async function everyRoute(
  app: Hono,
  ids: { pub: string; bound: string; ticket?: string },
): Promise<Record<string, number>> {
  const bearer = (id: string) => ({ authorization: `Bearer ${id}` });
  const answers = {
    data: await app.request('/api/data', { headers: bearer(ids.pub) }),
    framed: await app.request(`/embed-data/${ids.ticket ?? 'none'}/api/data`, {
      headers: { ...bearer(ids.pub), origin: 'null' },
    }),
    page: await app.request(`/embed/${ids.pub}`),
    oembed: await app.request(
      `/oembed?url=${encodeURIComponent(`${PUBLIC_URL}/embed/${ids.pub}`)}`,
    ),
    renew: await app.request('/api/renew', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-user': 'alice' },
      body: JSON.stringify({ id: ids.bound }),
    }),
  };
  return Object.fromEntries(Object.entries(answers).map(([route, r]) => [route, r.status]));
}

describe('one admission pipeline', () => {
  let backend: AnalyticsBackend;
  beforeAll(async () => {
    backend = await startAnalyticsBackend(API_KEY);
  }, 60_000);
  afterAll(() => backend.close());

  it('runs a check added to the shared list on every route, and its refusal refuses each', async () => {
    const checked: string[] = [];
    const blocked = new Set<string>();
    const probe: Step<Admission> = ({ c, verified }) => {
      checked.push(new URL(c.req.url).pathname.split('/')[1] ?? '');
      if (blocked.has(verified.claims.jti)) {
        throw new EdgeError('forbidden', 'Blocked by the added check.');
      }
    };
    const { app, signer } = buildRoutes(backend, [probe]);
    const pub = await signer.sign({ query: 'total', public: true, audience: BLOG });
    const bound = await signer.sign({ query: 'total', subject: 'alice' });
    const page = await (await app.request(`/embed/${pub.id}`)).text();
    const ticket = /endpoint="\.\.\/embed-data\/([^"/]+)\/"/.exec(page)?.[1];
    expect(ticket).toBeDefined();
    checked.length = 0;
    const ids = { pub: pub.id, bound: bound.id, ...(ticket ? { ticket } : {}) };
    expect(await everyRoute(app, ids)).toEqual({
      data: 200,
      framed: 200,
      page: 200,
      oembed: 200,
      renew: 200,
    });
    // data, framed data, embed page, oEmbed, renew: the check ran once on each.
    expect(checked.sort()).toEqual(['api', 'api', 'embed', 'embed-data', 'oembed']);
    blocked.add(pub.claims.jti);
    blocked.add(bound.claims.jti);
    expect(await everyRoute(app, ids)).toEqual({
      data: 403,
      framed: 403,
      page: 403,
      oembed: 403,
      renew: 403,
    });
  });

  it('refuses a revoked id on data, embed page, oEmbed and renew through the one revocation step', async () => {
    const { app, signer, revocation, logs } = buildRoutes(backend, []);
    const pub = await signer.sign({ query: 'total', public: true });
    const bound = await signer.sign({ query: 'total', subject: 'alice' });
    const ids = { pub: pub.id, bound: bound.id };
    const before = await everyRoute(app, ids);
    expect(before).toMatchObject({ data: 200, page: 200, oembed: 200, renew: 200 });
    await revocation.revoke(pub.claims.jti);
    await revocation.revoke(bound.claims.jti);
    logs.length = 0;
    // oEmbed words a revoked id as a URL with no chart behind it (404), as its spec asks.
    expect(await everyRoute(app, ids)).toMatchObject({
      data: 401,
      page: 401,
      oembed: 404,
      renew: 401,
    });
    const refusals = logs.filter((entry) => entry.message === 'revoked');
    expect(refusals.map((entry) => entry.event).sort()).toEqual([
      'data.denied',
      'data.denied',
      'embed.denied',
      'oembed.denied',
      'renew.denied',
    ]);
  });
});
