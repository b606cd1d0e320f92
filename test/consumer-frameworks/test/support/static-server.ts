import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** Serves a built app's `dist/` (decided later, when the app is built) on a free port. */
export async function startStaticServer(): Promise<{
  origin: string;
  serve(dir: string): void;
  close(): Promise<void>;
}> {
  let root: string | undefined;
  const server: Server = createServer(async (req, res) => {
    const path = normalize(new URL(req.url ?? '/', 'http://x').pathname).replace(/^\/+/, '');
    if (!root || path.startsWith('..')) {
      res.writeHead(404).end();
      return;
    }
    const file = join(root, path || 'index.html');
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    serve(dir) {
      root = dir;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
