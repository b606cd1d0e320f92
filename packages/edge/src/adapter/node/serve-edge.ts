import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Edge } from '../../create-edge.ts';
import { mountEdge } from '../../http/mount-edge.ts';

/** Options of {@link serveEdge}. */
export interface ServeEdgeOptions {
  /** @default 8787; 0 picks a free port */
  port?: number;
  /** @default '127.0.0.1' */
  hostname?: string;
  /** Mount path, e.g. `/analytics`. @default '' */
  basePath?: string;
}

/** A listening edge server. */
export interface ServedEdge {
  /** `http://host:port` plus the base path, without a trailing slash. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Serves an edge on Node with `@hono/node-server`. Per-IP limits use the socket address; behind
 * a reverse proxy, pass `clientIp` in the edge config to read the proxy's header instead.
 */
export async function serveEdge(
  edge: Edge | Hono,
  options: ServeEdgeOptions = {},
): Promise<ServedEdge> {
  const app = mountEdge(edge, options.basePath);
  const hostname = options.hostname ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    const server = serve(
      { fetch: app.fetch, port: options.port ?? 8787, hostname },
      (info: AddressInfo) => {
        const host = hostname.includes(':') ? `[${hostname}]` : hostname;
        resolve({
          url: `http://${host}:${info.port}${options.basePath ?? ''}`.replace(/\/$/, ''),
          port: info.port,
          close: () =>
            new Promise<void>((done) => {
              if ('closeAllConnections' in server) server.closeAllConnections();
              server.close(() => done());
            }),
        });
      },
    );
    server.once('error', reject);
  });
}
