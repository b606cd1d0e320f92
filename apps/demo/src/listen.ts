import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';

/** A fetch handler as `@hono/node-server` calls it: the request and its Node bindings. */
export type FetchHandler = (request: Request, env?: unknown) => Response | Promise<Response>;

/** A listening server: its origin and how to stop it. */
export interface Listening {
  origin: string;
  port: number;
  close(): Promise<void>;
}

function listenOnce(fetch: FetchHandler, port: number, hostname: string): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, port, hostname }, (info: AddressInfo) => {
      server.off('error', reject);
      const shown = hostname === '0.0.0.0' || hostname === '::' ? '127.0.0.1' : hostname;
      const host = shown.includes(':') ? `[${shown}]` : shown;
      resolve({
        origin: `http://${host}:${info.port}`,
        port: info.port,
        close: () =>
          new Promise<void>((done) => {
            if ('closeAllConnections' in server) server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
    server.once('error', reject);
  });
}

/**
 * Serves a fetch handler on Node. When `fallback` is set and the port is taken, a free port is
 * used instead (the demo prints whichever it got), so a second checkout can run beside the first.
 */
export async function listen(
  fetch: FetchHandler,
  port: number,
  hostname: string,
  fallback: boolean,
): Promise<Listening> {
  try {
    return await listenOnce(fetch, port, hostname);
  } catch (error) {
    if (!fallback || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    return listenOnce(fetch, 0, hostname);
  }
}
