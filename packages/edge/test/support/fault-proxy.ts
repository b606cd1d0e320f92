/**
 * Sits between the edge and the real engine on a real socket, speaking the service's wire format
 * (`POST /api/visualize/data`, JSON body with `api_key`): it counts and records every call,
 * forwards the ones it lets through to the engine, and can be told to be slow, hang, fail with a
 * status, answer malformed JSON or close the connection instead.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the proxy answers the next data requests. */
export type FaultMode =
  | { kind: 'ok' }
  | { kind: 'slow'; ms: number }
  | { kind: 'hang' }
  | { kind: 'status'; status: number; body?: unknown }
  | { kind: 'malformed' }
  | { kind: 'close' };

/** One request the fake received. */
export interface ProxiedCall {
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
  url: string;
}

export interface FaultProxy {
  url: string;
  calls: ProxiedCall[];
  /** Sets how requests are answered from now on (or for the next `times` requests). */
  mode(mode: FaultMode, times?: number): void;
  close(): Promise<void>;
}

export async function startFaultProxy(options: { upstream: string }): Promise<FaultProxy> {
  const { upstream } = options;
  let modes: { mode: FaultMode; times: number }[] = [];
  let standing: FaultMode = { kind: 'ok' };
  const hanging = new Set<() => void>();
  const service: FaultProxy = {
    url: '',
    calls: [],
    mode(mode, times) {
      if (times === undefined) {
        standing = mode;
        modes = [];
      } else modes.push({ mode, times });
    },
    close: async () => {
      for (const release of hanging) release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/api/visualize/data') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'Not found' }));
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'Invalid JSON' }));
        return;
      }
      service.calls.push({ body, headers: req.headers, url: req.url ?? '' });
      const next = modes[0];
      let mode = standing;
      if (next) {
        mode = next.mode;
        next.times -= 1;
        if (next.times <= 0) modes.shift();
      }
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      const pass = () => {
        fetch(`${upstream}/api/visualize/data`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }).then(
          async (answer) => send(answer.status, await answer.json()),
          () => send(502, { error: 'upstream unreachable' }),
        );
      };
      switch (mode.kind) {
        case 'ok':
          return pass();
        case 'slow': {
          const timer = setTimeout(pass, mode.ms);
          hanging.add(() => clearTimeout(timer));
          return;
        }
        case 'hang':
          hanging.add(() => res.destroy());
          return;
        case 'status':
          return send(mode.status, mode.body ?? { error: `fake failure ${mode.status}` });
        case 'malformed':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"result": [1, 2');
          return;
        case 'close':
          req.socket.destroy();
          return;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  service.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return service;
}
