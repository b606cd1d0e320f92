/**
 * The host app's registry for `pnpm edge sign` (the CLI mints public ids for page and CMS authors
 * with the same definitions the running edge serves):
 *
 *   pnpm edge sign --config examples/host-app/analytics-edge.config.ts \
 *     --keys .data/edge-signing-keys --public --query public-events --param tenant=acme
 *
 * No secrets here: keys come from `--keys` or `EDGE_SIGNING_KEYS`.
 */
import { defineEdgeConfig } from '@analytics-chart/edge';
import { EDGE_QUERIES } from './src/edge-queries.ts';

export default defineEdgeConfig((env) => ({
  queries: EDGE_QUERIES,
  publicUrl: env.EDGE_PUBLIC_URL ?? 'http://127.0.0.1:8787/analytics',
}));
