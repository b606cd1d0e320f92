import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A page on its own origin: a host's site that embeds charts from an edge elsewhere. */
export interface PageServer {
  origin: string;
  /** Replaces the HTML served at `/`. */
  setPage(html: string): void;
  close(): Promise<void>;
}

/** Serves one HTML page at `/` on 127.0.0.1 and an ephemeral port. */
export async function startPageServer(): Promise<PageServer> {
  let page = '<!doctype html><title>empty</title>';
  const server = createServer((request, response) => {
    if (request.url === '/favicon.ico') {
      response.writeHead(204).end();
      return;
    }
    if (request.url !== '/') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    setPage: (html) => {
      page = html;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
