import { createHmac } from 'node:crypto';
import { elementBundlePath } from '@analytics-chart/demo';
import {
  createEdge,
  type Edge,
  engineBackend,
  formatSigningKeys,
  generateSigningKey,
  jwtSession,
} from '@analytics-chart/edge';
import { bundleFile, type ServedEdge, serveEdge } from '@analytics-chart/edge/node';
import { type EngineWithEvents, startEngine } from '@analytics-chart/test-kit/engine';
import { freePort } from '@analytics-chart/test-kit/free-port';
import { dailyEvents, TENANT_FILTER } from '@analytics-chart/test-kit/queries';

const DAY = 86_400;

/** The edge the blog embeds from, with its engine. */
export interface AnalyticsEdge {
  edge: Edge;
  /** Its public URL, mount path included. */
  url: string;
  /** Mints a public id for Acme's daily signups, for `audience` when given. */
  publicId(audience?: string): Promise<{ id: string; jti: string }>;
  /** Revokes an id through the admin API, as an operator signed in to the host app. */
  revoke(jti: string): Promise<void>;
  close(): Promise<void>;
}

/** Acme's signups over the last week (`day + 2` on each day), and another tenant's. */
function events(now: number) {
  const out: { timestamp: number; json: Record<string, unknown> }[] = [];
  for (let day = 0; day < 7; day++) {
    for (let i = 0; i < day + 2; i++) {
      out.push({
        timestamp: now - day * DAY - 3600 - i * 60,
        json: { tenant: 'acme', event: 'signup' },
      });
    }
    out.push({ timestamp: now - day * DAY - 7200, json: { tenant: 'globex', event: 'signup' } });
  }
  return out;
}

/** An HS256 session JWT of the host app, for the admin API. */
function sessionToken(secret: string, subject: string): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const body = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ sub: subject, exp: Math.floor(Date.now() / 1000) + 600 })}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}

/**
 * The engine (DuckDB) with the fixture events and the edge on a free loopback port, its public
 * URL set so that it answers oEmbed; an operator session may use the admin API.
 */
export async function startAnalyticsEdge(): Promise<AnalyticsEdge> {
  const apiKey = `wordpress-test-${crypto.randomUUID()}`;
  const sessionSecret = crypto.randomUUID() + crypto.randomUUID();
  const engine: EngineWithEvents = await startEngine({
    apiKey,
    events: events(Math.floor(Date.now() / 1000)),
  });
  let served: ServedEdge | undefined;
  try {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/analytics`;
    const edge = createEdge({
      signingKeys: formatSigningKeys([generateSigningKey()]),
      backend: engineBackend(engine.engine, { apiKey }),
      queries: {
        'daily-signups': dailyEvents({
          title: 'Signups per day',
          filters: [TENANT_FILTER, ['event', '=', 'signup']],
          params: { tenant: { from: 'signer', pattern: '[a-z]{1,20}' } },
        }),
      },
      bundle: bundleFile(elementBundlePath()),
      publicUrl: url,
      // Public embeds on any page: the blog's pages fetch chart data from another origin.
      allowedOrigins: ['*'],
      // Every reader here is one loopback address: per-address limits would refuse the matrix.
      rateLimit: { perIp: false, perId: false },
      authorize: jwtSession({ secret: sessionSecret }),
      admin: (session) => session.subject === 'operator',
      log: () => {},
    });
    served = await serveEdge(edge, { port, basePath: '/analytics' });
    const token = sessionToken(sessionSecret, 'operator');
    return {
      edge,
      url,
      publicId: async (audience) => {
        const signed = await edge.signQueryId({
          query: 'daily-signups',
          params: { tenant: 'acme' },
          public: true,
          ttl: '1h',
          ...(audience ? { audience: [audience] } : {}),
        });
        return { id: signed.id, jti: signed.jti };
      },
      revoke: async (jti) => {
        const response = await fetch(`${url}/api/admin/ids/${jti}/revoke`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: '{}',
        });
        if (response.status !== 200) {
          throw new Error(`revoke answered ${response.status} ${await response.text()}`);
        }
      },
      close: async () => {
        await served?.close();
        await engine.close();
      },
    };
  } catch (error) {
    await served?.close();
    await engine.close();
    throw error;
  }
}
