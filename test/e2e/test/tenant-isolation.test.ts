/**
 * Tenant isolation over the demo's whole registry, against `pnpm start` itself. For every query
 * of the registry the demo runs (enumerated, so a query added later is covered without a new
 * test), every demo user and every value a signer parameter allows, the test signs through the
 * real sign route with that user's session and reads the data route. Whatever the edge answers
 * must equal what the very same registry answers over a workspace holding only that user's
 * tenant's events: one event of another tenant in any answer makes the two differ. Ids must also
 * be refused under the other tenant's session, and each user must get an answer for every query
 * (so a registry that refused everything would fail too).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createEdge,
  type Edge,
  engineBackend,
  formatSigningKeys,
  generateSigningKey,
} from '@analytics-chart/edge';
import { createEngine, type Engine } from '@analytics-chart/engine';
import { demoUsers, EDGE_QUERIES, type HostUser } from '@analytics-chart/example-host-app';
import type { ParamValue } from '@analytics-chart/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoProcess, startDemoProcess } from './support/demo-process.ts';

const API_KEY = `isolation-${crypto.randomUUID()}`;
const PASSWORD = 'isolation-password';
const USERS = demoUsers(PASSWORD);
const TENANTS = [...new Set(USERS.map((u) => u.tenant))];

let demo: DemoProcess;
let dataDir: string;
/** Per tenant: an engine holding only that tenant's events, and an edge over it with the registry. */
const oracles = new Map<string, { engine: Engine; edge: Edge }>();
const cookies = new Map<string, string>();

interface Row {
  timestamp: number;
  json: string;
}

/** Every event of the demo workspace, read back page by page through the engine's SQL mode. */
async function demoEvents(): Promise<Row[]> {
  const rows: Row[] = [];
  for (let offset = 0; ; offset += 2000) {
    const response = await fetch(`${demo.engineUrl}/api/visualize/data`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        api_key: API_KEY,
        graph_type: 'Table',
        sql_query:
          'SELECT timestamp, json FROM all_events ORDER BY timestamp, json LIMIT 2000 OFFSET {offset:UInt32}',
        parameters: { offset },
      }),
    });
    const body = (await response.json()) as { result: Row[] };
    expect(response.status).toBe(200);
    rows.push(...body.result);
    if (body.result.length < 2000) return rows;
  }
}

async function signIn(login: string): Promise<string> {
  const response = await fetch(`${demo.url}login`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      origin: new URL(demo.url).origin,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ login, password: PASSWORD }).toString(),
  });
  expect(response.status).toBe(303);
  return (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
}

/** Every combination of the values the signer parameters of a query allow. */
function signerChoices(name: string): Record<string, ParamValue>[] {
  let choices: Record<string, ParamValue>[] = [{}];
  for (const [param, spec] of Object.entries(EDGE_QUERIES[name]?.params ?? {})) {
    if (spec.from !== 'signer') continue;
    const values = spec.enum ?? (spec.default !== undefined ? [spec.default] : []);
    if (values.length === 0) {
      throw new Error(`query ${name}: give signer parameter ${param} an enum or a default`);
    }
    choices = choices.flatMap((choice) => values.map((value) => ({ ...choice, [param]: value })));
  }
  return choices;
}

/** The values a query's session parameters take from this user's session. */
function sessionParams(name: string, user: HostUser): Record<string, ParamValue> {
  const session: Record<string, ParamValue> = {
    sub: user.login,
    tenant: user.tenant,
    name: user.name,
  };
  const out: Record<string, ParamValue> = {};
  for (const [param, spec] of Object.entries(EDGE_QUERIES[name]?.params ?? {})) {
    if (spec.from !== 'session') continue;
    const value = session[spec.claim ?? param];
    if (value === undefined) throw new Error(`query ${name}: no session value for ${param}`);
    out[param] = value;
  }
  return out;
}

/** A chart payload without what depends on the moment it was computed. */
function content(payload: Record<string, unknown>): Record<string, unknown> {
  const { generatedAt: _g, expiresAt: _e, range: _r, ...rest } = payload;
  return rest;
}

/** What the registry answers for this query over the tenant's events alone. */
async function truth(
  tenant: string,
  query: string,
  params: Record<string, ParamValue>,
): Promise<Record<string, unknown>> {
  const oracle = oracles.get(tenant);
  if (!oracle) throw new Error(`no oracle for ${tenant}`);
  const { id } = await oracle.edge.signQueryId({ query, params, public: true });
  const response = await oracle.edge.app.request('/api/data', {
    headers: { authorization: `Bearer ${id}` },
  });
  expect(response.status, `${query} over ${tenant}'s events alone`).toBe(200);
  return content((await response.json()) as Record<string, unknown>);
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'analytics-chart-isolation-'));
  demo = await startDemoProcess({
    HOST: '127.0.0.1',
    PORT: '0',
    EXAMPLES_PORT: '0',
    ENGINE_PORT: '0',
    DEMO_DATA_DIR: join(dataDir, 'demo'),
    DEMO_EVENTS: '6000',
    DEMO_DATA_MAX_AGE_HOURS: '0',
    ANALYTICS_API_KEY: API_KEY,
    SESSION_SECRET: `session-secret-${crypto.randomUUID()}`,
    EDGE_SIGNING_KEYS: formatSigningKeys([generateSigningKey()]),
    DEMO_PASSWORD: PASSWORD,
  });
  const events = await demoEvents();
  expect(events.length).toBe(6000);
  for (const tenant of TENANTS) {
    const engine = await createEngine({
      dataDir: join(dataDir, `oracle-${tenant}`),
      workspaces: { default: API_KEY },
    });
    // The split is done here, by parsing each event, not by any query of the registry.
    const own = events.filter((e) => JSON.parse(e.json).tenant === tenant);
    expect(own.length).toBeGreaterThan(100);
    // Sent together, as many clients would: the engine commits concurrent logs in shared
    // transactions instead of one each.
    const answers = await Promise.all(
      own.map((e) => engine.log({ api_key: API_KEY, timestamp: e.timestamp, json: e.json })),
    );
    expect(answers.map((a) => a.status)).toEqual(own.map(() => 200));
    const edge = createEdge({
      queries: EDGE_QUERIES,
      backend: engineBackend(engine, { apiKey: API_KEY }),
      signingKeys: [generateSigningKey()],
      bundle: 'export {};\n',
      log: () => {},
    });
    oracles.set(tenant, { engine, edge });
  }
  for (const user of USERS) cookies.set(user.login, await signIn(user.login));
}, 300_000);

afterAll(async () => {
  if (demo) await demo.stop();
  for (const { engine } of oracles.values()) await engine.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('tenant isolation over the demo registry', () => {
  const names = Object.keys(EDGE_QUERIES);

  it('enumerates the registry the demo serves', () => {
    expect(names.length).toBeGreaterThanOrEqual(10);
  });

  for (const name of names) {
    it(`${name}: every user sees their own tenant's answer only`, async () => {
      for (const user of USERS) {
        const cookie = cookies.get(user.login) ?? '';
        const other = USERS.find((u) => u.tenant !== user.tenant);
        let answered = 0;
        for (const params of signerChoices(name)) {
          const signed = await fetch(`${demo.edgeUrl}/api/sign`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', cookie },
            body: JSON.stringify({ query: name, params }),
          });
          const what = `${user.login} signing ${name} ${JSON.stringify(params)}`;
          if (signed.status !== 200) {
            // A refusal is safe; it must be a clean 403, not an error.
            expect(signed.status, what).toBe(403);
            continue;
          }
          const { id } = (await signed.json()) as { id: string };
          const response = await fetch(`${demo.edgeUrl}/api/data`, {
            headers: { authorization: `Bearer ${id}`, cookie },
          });
          expect(response.status, what).toBe(200);
          const got = content((await response.json()) as Record<string, unknown>);
          const expected = await truth(user.tenant, name, {
            ...params,
            ...sessionParams(name, user),
          });
          expect(got, `${what}: the answer holds data of another tenant`).toEqual(expected);
          answered++;
          if (other) {
            const replayed = await fetch(`${demo.edgeUrl}/api/data`, {
              headers: { authorization: `Bearer ${id}`, cookie: cookies.get(other.login) ?? '' },
            });
            expect(replayed.status, `${what}, replayed by ${other.login}`).toBe(403);
          }
        }
        expect(answered, `${user.login} got no answer for ${name}`).toBeGreaterThan(0);
      }
    });
  }
});
