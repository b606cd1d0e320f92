import { createServer } from 'node:net';

/**
 * A loopback port no one listens on now, for a server whose URL must be known before it starts
 * (and for Redis, which reads port 0 as "no TCP").
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
