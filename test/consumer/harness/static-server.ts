import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A tiny static server: exact paths to file contents or text, with the headers a public CDN
 * sends (any origin may load a module script from it). `host` picks the origin it is reached
 * under, so two servers make two origins.
 */
export async function staticServer(
  routes: Record<string, { file?: string; text?: string; type: string }>,
  host: '127.0.0.1' | 'localhost' = '127.0.0.1',
): Promise<{ origin: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const route = routes[new URL(req.url ?? '/', 'http://x').pathname];
    if (!route) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'content-type': route.type,
      'access-control-allow-origin': '*',
      'cache-control': 'public, max-age=31536000, immutable',
    });
    res.end(route.file ? readFileSync(route.file) : route.text);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${host}:${port}`,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
