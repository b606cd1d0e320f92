/**
 * `npm start`: the host app on Node, configured from the environment the way it runs in
 * production. The edge is mounted at `/analytics`; its backend is the analytics service at
 * `ANALYTICS_BASE_URL`, or, without it, the engine in this process on `ANALYTICS_DATA_DIR`
 * (`nodeEdgeConfig`). Secrets come from the environment only.
 */
import type { AddressInfo } from 'node:net';
import { createEdge, nodeEdgeConfig } from '@analytics-chart/edge/node';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { createHostApp } from './create-host-app.ts';
import { EDGE_QUERIES } from './edge-queries.ts';
import { HOST_STUDIO } from './host-edge-config.ts';
import { sessionReader } from './session-cookie.ts';
import { createUserStore, demoUsers } from './users.ts';

const env = process.env;

function required(name: string): string {
  const value = env[name]?.trim();
  if (!value) throw new Error(`${name} is not set (see README.md, "Run it on its own")`);
  return value;
}

async function main(): Promise<void> {
  const session = { secret: required('SESSION_SECRET'), secure: env.COOKIE_SECURE === 'true' };
  const password = env.DEMO_PASSWORD?.trim() || 'demo-password';
  const hostname = env.HOST?.trim() || '127.0.0.1';
  // The origin is known once the server listens (PORT=0 picks a free port); until the app is
  // built from it, requests wait for nothing and get a 503.
  let app: Hono | undefined;
  const server = serve(
    {
      fetch: (request, bindings) =>
        app?.fetch(request, bindings) ?? new Response(null, { status: 503 }),
      port: Number(env.PORT ?? 8787),
      hostname,
    },
    (info: AddressInfo) => {
      start(info.port).catch(fail);
    },
  );
  server.once('error', fail);

  async function start(port: number): Promise<void> {
    const origin = env.HOST_ORIGIN?.trim() || `http://${hostname}:${port}`;
    const edgeEnv = { ...env, EDGE_PUBLIC_URL: env.EDGE_PUBLIC_URL ?? `${origin}/analytics` };
    const node = await nodeEdgeConfig(
      {
        queries: EDGE_QUERIES,
        authorize: sessionReader(session),
        studio: HOST_STUDIO,
        // Public embeds on other origins may fetch data (without credentials) unless
        // EDGE_ALLOWED_ORIGINS says otherwise.
        allowedOrigins: env.EDGE_ALLOWED_ORIGINS?.trim() ? undefined : ['*'],
      },
      edgeEnv,
    );
    const users = demoUsers(password);
    app = createHostApp({
      edge: createEdge(node.config),
      session,
      users: await createUserStore(users),
      studio: true,
      idTtl: env.EDGE_SESSION_ID_TTL?.trim() || undefined,
      origin,
    });
    const stop = () => {
      server.close();
      void node.close().then(() => process.exit(0));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    process.stdout.write(`host app (${node.backend} backend) listening on ${origin}/\n`);
    process.stdout.write(`sign in as ${users.map((u) => u.login).join(' or ')}\n`);
  }
}

function fail(error: unknown): void {
  process.stderr.write(`host app: ${(error as Error).message ?? String(error)}\n`);
  process.exit(1);
}

main().catch(fail);
