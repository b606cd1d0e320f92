import {
  bundleFile,
  consoleLogSink,
  createEdge,
  engineBackend,
  type SigningKey,
} from '@analytics-chart/edge/node';
import { createEngine, serveEngine } from '@analytics-chart/engine';
import {
  createHostApp,
  createUserStore,
  demoUsers,
  hostEdgeConfig,
} from '@analytics-chart/example-host-app';
import type { Hono } from 'hono';
import { elementBundlePath } from './element-bundle.ts';
import { DEMO_WORKSPACE, engineDataDir } from './ensure-demo-data.ts';
import { createExamplesSite, type ExamplesSite } from './examples-site/create-examples-site.ts';
import { type Listening, listen } from './listen.ts';

/** Everything the running demo needs: where to listen, the data, and the three secrets. */
export interface StartDemoOptions {
  host: string;
  port: number;
  portFallback: boolean;
  examplesPort: number;
  examplesPortFallback: boolean;
  enginePort?: number | undefined;
  dataDir: string;
  apiKey: string;
  signingKeys: readonly SigningKey[] | string;
  sessionSecret: string;
  demoPassword: string;
  idTtl: string;
  secureCookies: boolean;
  logLevel: 'info' | 'warn';
  /** Ids refused from the start, by jti. */
  revokedIds?: readonly string[];
  /** Origins whose pages may call the edge from the browser. @default ['*'] */
  allowedOrigins?: readonly string[];
}

/** The running demo. */
export interface RunningDemo {
  /** The host app: sign in and see the dashboard. */
  url: string;
  /** The example pages' origin. */
  examplesUrl: string;
  /** The engine's HTTP API, when `enginePort` was given. */
  engineUrl: string | undefined;
  /** The edge, mounted in the host app. */
  edgeUrl: string;
  logins: string[];
  /** Stops every server, then closes the engine. */
  close(): Promise<void>;
}

/**
 * Starts the demo in this process: the engine on the demo workspace (in-process backend, so the
 * key never crosses a socket), the edge mounted at `/analytics` in the host app, the example
 * pages on a second origin, and, on request, the engine's own HTTP API.
 */
export async function startDemo(options: StartDemoOptions): Promise<RunningDemo> {
  const engine = await createEngine({
    dataDir: engineDataDir(options.dataDir),
    workspaces: { [DEMO_WORKSPACE]: options.apiKey },
  });
  const servers: Listening[] = [];
  const close = async () => {
    for (const server of servers.reverse()) await server.close();
    await engine.close();
  };
  try {
    const session = { secret: options.sessionSecret, secure: options.secureCookies };
    // The host's origin is known once it listens, and the edge's public URL (oEmbed) and the
    // sign-in check are built from it, never from a request's Host; nothing is served before.
    let hostApp: Hono | undefined;
    const host = await listen(
      (request, env) => hostApp?.fetch(request, env) ?? new Response(null, { status: 503 }),
      options.port,
      options.host,
      options.portFallback,
    );
    servers.push(host);
    const edgeUrl = `${host.origin}/analytics`;
    const edge = createEdge(
      hostEdgeConfig({
        session,
        backend: engineBackend(engine, { apiKey: options.apiKey }),
        signingKeys: options.signingKeys,
        bundle: bundleFile(elementBundlePath()),
        revokedIds: options.revokedIds ?? [],
        allowedOrigins: options.allowedOrigins ?? ['*'],
        publicUrl: edgeUrl,
        log: (entry) => {
          if (options.logLevel === 'info' || entry.level !== 'info') consoleLogSink(entry);
        },
      }),
    );
    const users = demoUsers(options.demoPassword);
    const logins = users.map((u) => u.login);
    hostApp = createHostApp({
      edge,
      session,
      users: await createUserStore(users),
      // The edge has a public URL, so hostEdgeConfig turned its embed studio on.
      studio: true,
      idTtl: options.idTtl,
      loginHint: { logins, password: options.demoPassword },
      origin: hostOrigins(host),
    });
    // The site's origin (its ids' aud) is known once it listens; nothing is served before that.
    let examplesSite: ExamplesSite | undefined;
    const examples = await listen(
      (request) => examplesSite?.app.fetch(request) ?? new Response(null, { status: 503 }),
      options.examplesPort,
      options.host,
      options.examplesPortFallback,
    );
    servers.push(examples);
    examplesSite = createExamplesSite({
      edge,
      edgeUrl,
      dashboardUrl: `${host.origin}/`,
      origin: examples.origin,
    });
    // The example pages' public ids, minted now against this machine's key.
    await examplesSite.prerender();
    let engineUrl: string | undefined;
    if (options.enginePort !== undefined) {
      const served = await serveEngine({ engine, port: options.enginePort, host: options.host });
      servers.push({ origin: served.url, port: 0, close: served.close });
      engineUrl = served.url;
    }
    return {
      url: `${host.origin}/`,
      examplesUrl: `${examples.origin}/`,
      engineUrl,
      edgeUrl,
      logins,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The origins a browser may show the demo under: the one it printed, and `localhost` for a loopback address. */
function hostOrigins(host: Listening): string[] {
  const origins = [host.origin];
  if (/^http:\/\/(127\.0\.0\.1|\[::1\])(?=:)/.test(host.origin)) {
    origins.push(`http://localhost:${host.port}`);
  }
  return origins;
}
