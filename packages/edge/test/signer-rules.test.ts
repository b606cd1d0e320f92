/**
 * Who may sign a definition: the `signers` rule on the sign route and renewal, with a session
 * predicate, claims matched against array fields, and definitions the server alone signs.
 */
import { sign as signJwt } from 'hono/jwt';
import { describe, expect, it } from 'vitest';
import { httpBackend } from '../src/backend/http-backend.ts';
import { createEdge } from '../src/create-edge.ts';
import type { QueryDefinition } from '../src/registry/query-definition.ts';
import { jwtSession } from '../src/session/jwt-session.ts';
import { generateSigningKey } from '../src/tokens/signing-keys.ts';

const SECRET = 'a-session-secret-of-at-least-32-characters!';
const count = (signers: QueryDefinition['signers']): QueryDefinition => ({
  query: {
    graph_type: 'Single Value',
    start: '7 days ago',
    end: 'now',
    filters: [['tenant', '=', { $param: 'tenant' }]],
  },
  params: { tenant: { from: 'session' } },
  signers,
});

const edge = createEdge({
  queries: {
    'owners-only': count({ allow: (session) => session.owner === true }),
    'billing-role': count({ claims: { roles: ['billing'] } }),
    'server-only': count({ sessions: false }),
  },
  // Signing never reaches the backend; nothing listens there.
  backend: httpBackend({ baseUrl: 'http://127.0.0.1:9', apiKey: 'never-sent' }),
  signingKeys: [generateSigningKey()],
  authorize: jwtSession({ secret: SECRET }),
  log: () => {},
});

async function cookie(claims: Record<string, unknown>): Promise<string> {
  const exp = Math.floor(Date.now() / 1000) + 600;
  return `session=${await signJwt({ sub: 'u1', tenant: 'acme', exp, ...claims }, SECRET)}`;
}

async function post(path: string, body: unknown, claims: Record<string, unknown>) {
  const response = await edge.app.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: await cookie(claims) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('signers', () => {
  it('signs for a session the allow predicate admits, and only for it', async () => {
    expect((await post('/api/sign', { query: 'owners-only' }, { owner: true })).status).toBe(200);
    const refused = await post('/api/sign', { query: 'owners-only' }, { owner: 'true' });
    expect(refused).toEqual({
      status: 403,
      body: { code: 'forbidden', error: 'Your session may not have this query.' },
    });
  });

  it('matches a claim against a session field holding a list', async () => {
    const sign = (roles: unknown) => post('/api/sign', { query: 'billing-role' }, { roles });
    expect((await sign(['viewer', 'billing'])).status).toBe(200);
    expect((await sign('billing')).status).toBe(200);
    expect((await sign(['viewer'])).status).toBe(403);
    expect((await sign(undefined)).status).toBe(403);
  });

  it('refuses the sign route for server-only definitions, whose server-signed ids still renew', async () => {
    expect((await post('/api/sign', { query: 'server-only' }, {})).status).toBe(403);
    const { id } = await edge.signQueryId({
      query: 'server-only',
      subject: 'u1',
      params: { tenant: 'acme' },
    });
    expect((await post('/api/renew', { id }, {})).status).toBe(200);
  });

  it('renews only while the rule still admits the session', async () => {
    const signed = await post('/api/sign', { query: 'owners-only' }, { owner: true });
    const id = signed.body.id as string;
    expect((await post('/api/renew', { id }, { owner: true })).status).toBe(200);
    expect((await post('/api/renew', { id }, { owner: false })).status).toBe(403);
  });

  it('fails start-up for a rule that is not a rule', () => {
    expect(() =>
      createEdge({
        queries: { q: { ...count(undefined), signers: { claims: { role: [] } } } as never },
        backend: httpBackend({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k' }),
        signingKeys: [generateSigningKey()],
        log: () => {},
      }),
    ).toThrow(/signers\.claims\.role: list at least one admitted value/);
  });
});
