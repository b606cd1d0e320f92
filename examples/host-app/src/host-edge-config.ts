import type { Backend, EdgeConfig, SigningKey, StudioRule } from '@analytics-chart/edge';
import { EDGE_QUERIES } from './edge-queries.ts';
import { PUBLIC_QUERIES } from './public-queries.ts';
import { type SessionSettings, sessionReader, userOf } from './session-cookie.ts';

/**
 * Who may publish charts in the edge's embed studio (`/analytics/studio`): every signed-in user,
 * and only the public queries, each locked to the user's own tenant.
 */
export const HOST_STUDIO: StudioRule = {
  allow: (session) => userOf(session) !== null,
  queries: Object.keys(PUBLIC_QUERIES),
};

/** What the host decides about its edge; the rest of `EdgeConfig` may be passed through. */
export interface HostEdgeOptions extends Partial<EdgeConfig> {
  backend: Backend;
  signingKeys: readonly SigningKey[] | string;
  session: SessionSettings;
}

/**
 * The edge config of the host app: the demo registry, and the host's own session cookie as the
 * edge's session check, so the data and renew routes know the same viewer and tenant as the
 * pages. Public embeds on other origins may fetch data (`*`, without credentials). With a
 * `publicUrl` (which its snippets name), the embed studio is on for the host's users.
 */
export function hostEdgeConfig({ session, ...rest }: HostEdgeOptions): EdgeConfig {
  return {
    queries: EDGE_QUERIES,
    authorize: sessionReader(session),
    allowedOrigins: ['*'],
    ...(rest.publicUrl ? { studio: HOST_STUDIO } : {}),
    ...rest,
  };
}
