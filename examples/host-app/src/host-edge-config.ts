import type { Backend, EdgeConfig, SigningKey } from '@analytics-chart/edge';
import { EDGE_QUERIES } from './edge-queries.ts';
import { type SessionSettings, sessionReader } from './session-cookie.ts';

/** What the host decides about its edge; the rest of `EdgeConfig` may be passed through. */
export interface HostEdgeOptions extends Partial<EdgeConfig> {
  backend: Backend;
  signingKeys: readonly SigningKey[] | string;
  session: SessionSettings;
}

/**
 * The edge config of the host app: the demo registry, and the host's own session cookie as the
 * edge's session check, so the data and renew routes know the same viewer and tenant as the
 * pages. Public embeds on other origins may fetch data (`*`, without credentials).
 */
export function hostEdgeConfig({ session, ...rest }: HostEdgeOptions): EdgeConfig {
  return {
    queries: EDGE_QUERIES,
    authorize: sessionReader(session),
    allowedOrigins: ['*'],
    ...rest,
  };
}
