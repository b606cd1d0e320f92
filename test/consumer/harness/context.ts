import type { LoadLine } from './events.ts';
import type { PackageName } from './pack.ts';

/** What the global setup hands every scenario (vitest `inject('consumer')`). */
export interface ConsumerContext {
  /** The suite's scratch directory, outside the workspace; scratch projects live below it. */
  root: string;
  /** Each package's packed tarball. */
  tarballs: Record<PackageName, string>;
  /** The running `analytics-engine serve` installed from its tarball. */
  engineUrl: string;
  /** Its workspace key (the one secret an edge holds). */
  apiKey: string;
  /** `kid:secret` for EDGE_SIGNING_KEYS, shared by every edge of the suite. */
  signingKeys: string;
  /** The events loaded into the engine's `events` collection. */
  events: LoadLine[];
}

declare module 'vitest' {
  export interface ProvidedContext {
    consumer: ConsumerContext;
  }
}
