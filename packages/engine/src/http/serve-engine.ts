import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Engine } from '../engine.ts';
import { createEngineApp } from './create-engine-app.ts';

/** Where to listen. `port: 0` picks a free port. */
export interface ServeEngineOptions {
  engine: Engine;
  port?: number;
  host?: string;
}

/** A listening engine: its base URL and how to stop listening (the engine stays open). */
export interface ServedEngine {
  url: string;
  close(): Promise<void>;
}

/** Serves the engine's HTTP app on Node's HTTP server and resolves once it listens. */
export function serveEngine({
  engine,
  port = 8787,
  host = '127.0.0.1',
}: ServeEngineOptions): Promise<ServedEngine> {
  const app = createEngineApp(engine);
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port, hostname: host }, (info: AddressInfo) => {
      server.off('error', reject);
      const shown = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shown}:${info.port}`,
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()));
            if ('closeAllConnections' in server) server.closeAllConnections();
          }),
      });
    });
    server.once('error', reject);
  });
}
