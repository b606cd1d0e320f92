import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a proxy in front of ClickHouse does with one request, given its statement and body. */
export interface ProxyHooks {
  /** Answers the request itself (resolving true) instead of forwarding it. */
  before?(statement: string, body: Buffer, res: ServerResponse): Promise<boolean>;
  /** Takes ClickHouse's answer itself (returning true) instead of relaying it. */
  after?(statement: string, answer: IncomingMessage, req: IncomingMessage): boolean;
}

/**
 * A proxy in front of the ClickHouse at `url` that forwards every request, but for what `hooks`
 * take: a test's way to hold, refuse or cut off one statement.
 */
export async function clickHouseProxy(
  url: string,
  hooks: ProxyHooks,
): Promise<{ url: string; close(): void }> {
  const proxy = createServer(async (req, res) => {
    const target = new URL(req.url ?? '/', url);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    // The statement is in the `query` parameter or leads the body.
    const statement = target.searchParams.get('query') ?? body.subarray(0, 200).toString();
    if (await hooks.before?.(statement, body, res)) return;
    const upstream = request(target, { method: req.method, headers: req.headers }, (answer) => {
      if (hooks.after?.(statement, answer, req)) return;
      res.writeHead(answer.statusCode ?? 500, answer.headers);
      answer.pipe(res);
    });
    upstream.end(body);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      proxy.closeAllConnections();
      proxy.close();
    },
  };
}
