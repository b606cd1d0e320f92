import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for a non-JavaScript host app's session endpoint (Django's, Rails'…): answers
 * `{subject, tenant}` for a known `sessionid` cookie, 401 otherwise. The edge's forwarded-cookie
 * check asks it.
 */
export async function sessionEndpoint(
  sessions: Record<string, { subject: string; tenant: string }>,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const id = /(?:^|;\s*)sessionid=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    const session = id ? sessions[id] : undefined;
    res.writeHead(session ? 200 : 401, { 'content-type': 'application/json' });
    res.end(JSON.stringify(session ?? { error: 'not signed in' }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/session`,
    close: () => new Promise((done) => server.close(() => done())),
  };
}
