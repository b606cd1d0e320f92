/**
 * A stand-in for the hosted analytics service for fault cases we cannot provoke in a real
 * engine: it speaks the real wire format (`POST /api/visualize/data`, JSON body with `api_key`,
 * `{"error":"Invalid API KEY"}` with 400) over a real socket, and can be told to be slow, hang,
 * fail with 5xx, answer malformed JSON or close the connection.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the fake answers the next data requests. */
export type FakeMode =
  | { kind: 'ok' }
  | { kind: 'slow'; ms: number }
  | { kind: 'hang' }
  | { kind: 'status'; status: number; body?: unknown }
  | { kind: 'malformed' }
  | { kind: 'close' };

/** One request the fake received. */
export interface FakeCall {
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
  url: string;
}

export interface FakeService {
  url: string;
  calls: FakeCall[];
  /** Sets how requests are answered from now on (or for the next `times` requests). */
  mode(mode: FakeMode, times?: number): void;
  /** Computes the envelope of a successful answer. */
  answer: (body: Record<string, unknown>) => unknown;
  close(): Promise<void>;
}

export async function startFakeService(apiKey: string): Promise<FakeService> {
  let modes: { mode: FakeMode; times: number }[] = [];
  let standing: FakeMode = { kind: 'ok' };
  const hanging = new Set<() => void>();
  const service: FakeService = {
    url: '',
    calls: [],
    mode(mode, times) {
      if (times === undefined) {
        standing = mode;
        modes = [];
      } else modes.push({ mode, times });
    },
    answer: () => ({ result: [], metadata: {} }),
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
      if (body.api_key !== apiKey) return send(400, { error: 'Invalid API KEY' });
      switch (mode.kind) {
        case 'ok':
          return send(200, service.answer(body));
        case 'slow': {
          const timer = setTimeout(() => send(200, service.answer(body)), mode.ms);
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
