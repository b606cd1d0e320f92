/**
 * The suite's edge served by Bun's or Deno's own HTTP server, the way a deployment on either
 * would run it: `createEdge(edgeConfigFromEnv(env, overrides))`, `mountEdge(edge, '/analytics')`,
 * its `fetch` given to `Bun.serve` or `Deno.serve`. Beside it, `/client-ip` answers what
 * `defaultClientIp` reads from that runtime's server (the suite's own config reads a header).
 * Log entries go to stdout as JSON lines; the first line is `listening on <url>`. Started by
 * `startRuntimeEdge` (harness.ts).
 */
import { edgeConfigFromEnv } from '../../src/config/config-from-env.ts';
import { createEdge } from '../../src/create-edge.ts';
import { mountEdge } from '../../src/http/mount-edge.ts';
import { defaultClientIp } from '../../src/http/respond.ts';
import { testEdgeOverrides } from './test-config.ts';

type Fetch = (request: Request, env: unknown) => Response | Promise<Response>;
declare const Bun:
  | { serve(options: { port: number; hostname: string; fetch: Fetch }): { url: URL } }
  | undefined;
declare const Deno:
  | {
      env: { toObject(): Record<string, string> };
      serve(
        options: { port: number; hostname: string; onListen(addr: { port: number }): void },
        fetch: Fetch,
      ): unknown;
    }
  | undefined;

const env = typeof Deno !== 'undefined' ? Deno.env.toObject() : process.env;
const edge = createEdge({
  ...edgeConfigFromEnv(env, testEdgeOverrides(env)),
  log: (entry) => console.log(JSON.stringify(entry)),
});
const app = mountEdge(edge, '/analytics');
app.get('/client-ip', (c) => c.text(defaultClientIp(c) ?? 'none'));
const hostname = '127.0.0.1';

if (typeof Bun !== 'undefined') {
  const server = Bun.serve({ port: 0, hostname, fetch: app.fetch });
  console.log(`listening on ${server.url.origin}`);
} else if (typeof Deno !== 'undefined') {
  Deno.serve(
    {
      port: 0,
      hostname,
      onListen: ({ port }) => console.log(`listening on http://${hostname}:${port}`),
    },
    app.fetch,
  );
} else {
  throw new Error('runtime-entry.ts runs under Bun or Deno');
}
