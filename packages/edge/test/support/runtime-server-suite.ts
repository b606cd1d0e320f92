import { describe, expect, it } from 'vitest';
import { formatSigningKeys, generateSigningKey } from '../../src/tokens/signing-keys.ts';
import { startRuntimeEdge } from './harness.ts';

/**
 * What the shared suite cannot see under Bun and Deno, because its config reads the client
 * address from a header: the address `defaultClientIp` reads from the runtime's own server.
 * Without it every client of a Bun or Deno deployment would share one per-IP bucket.
 */
export function describeRuntimeServer(runtime: 'bun' | 'deno') {
  describe(`the edge on ${runtime}'s own server`, () => {
    it('reads the client address from the connection', async () => {
      const edge = await startRuntimeEdge(runtime, {
        ANALYTICS_BASE_URL: 'http://127.0.0.1:9',
        ANALYTICS_API_KEY: `key-${crypto.randomUUID()}`,
        EDGE_SIGNING_KEYS: formatSigningKeys([generateSigningKey()]),
        SESSION_SECRET: crypto.randomUUID(),
      });
      try {
        const answer = await fetch(new URL('/client-ip', edge.url));
        expect(await answer.text()).toBe('127.0.0.1');
      } finally {
        await edge.close();
      }
    });
  });
}
