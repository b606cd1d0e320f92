/**
 * Entry of the edge process the items run: the edge exactly as a Node host deploys it
 * (`edgeConfigFromEnv` over the environment, `jwtSession` on the `session` cookie, the element
 * bundle from its file, `serveEdge` on loopback), with the reliability registry. Code-side
 * settings (cache, limits, id lifetimes) come as JSON in `RELIABILITY_EDGE_OPTIONS`.
 * Prints `edge listening on <url>`; stops on SIGTERM.
 */
import {
  bundleFile,
  createEdge,
  type EdgeConfig,
  edgeConfigFromEnv,
  jwtSession,
  serveEdge,
} from '@analytics-chart/edge/node';
import { answerHeapProbes } from './heap-probe.ts';
import { RELIABILITY_QUERIES } from './reliability-queries.ts';
import { ELEMENT_BUNDLE } from './repo-paths.ts';

const options = JSON.parse(process.env.RELIABILITY_EDGE_OPTIONS ?? '{}') as Partial<EdgeConfig>;
const sessionSecret = process.env.SESSION_SECRET;
if (!sessionSecret) throw new Error('SESSION_SECRET is not set');

// The embed studio needs a public URL for its snippets; with one, every session may publish.
const publicUrl = options.publicUrl ?? process.env.EDGE_PUBLIC_URL;
const edge = createEdge(
  edgeConfigFromEnv(process.env, {
    ...options,
    queries: RELIABILITY_QUERIES,
    authorize: jwtSession({ secret: sessionSecret, cookie: 'session' }),
    bundle: bundleFile(ELEMENT_BUNDLE),
    ...(publicUrl ? { studio: { allow: () => true, queries: ['public-daily'] } } : {}),
  }),
);
const served = await serveEdge(edge, { port: 0, hostname: '127.0.0.1' });
answerHeapProbes();
process.stdout.write(`edge listening on ${served.url}\n`);
process.once('SIGTERM', () => {
  served.close().then(() => process.exit(0));
});
