/**
 * A fault-injecting analytics service on a real socket, speaking the service's wire format
 * (`POST /api/visualize/data`, JSON body carrying `api_key`). In `ok` mode it forwards to the real
 * engine process; otherwise it is slow, hangs, fails with a status, answers malformed JSON,
 * closes the connection before or in the middle of its answer, rejects the key, redirects, or is
 * down altogether (nothing listening on its port). Every call is counted with the mode it met.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** How the service answers. */
export type Fault =
  | { kind: 'ok' }
  | { kind: 'slow'; ms: number }
  | { kind: 'hang' }
  | { kind: 'status'; status: number; body: unknown }
  | { kind: 'html'; status: number }
  | { kind: 'malformed' }
  | { kind: 'close' }
  | { kind: 'close-mid-response' }
  | { kind: 'redirect' };

/** One call the service received. */
export interface FaultCall {
  fault: Fault['kind'];
  apiKey: unknown;
  url: string;
  /** Header names and values joined, to check the key never travels there. */
  headerText: string;
}

/** The running service. */
export interface FaultService {
  url: string;
  calls: FaultCall[];
  set(fault: Fault): void;
  /** Stops listening (connection refused) until {@link FaultService.up}. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Starts the service in front of `upstream` (the real engine's base URL). */
export async function startFaultService(upstream: string): Promise<FaultService> {
  let fault: Fault = { kind: 'ok' };
  const sockets = new Set<Socket>();
  const calls: FaultCall[] = [];

  const send = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  };

  const forward = async (res: ServerResponse, text: string) => {
    try {
      const answer = await fetch(`${upstream}/api/visualize/data`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: text,
      });
      const body = await answer.text();
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(body);
    } catch {
      if (!res.writableEnded) res.destroy();
    }
  };

  const server = createServer(async (req, res) => {
    const text = await readBody(req);
    if (req.method !== 'POST' || req.url !== '/api/visualize/data') {
      send(res, 404, { error: `no route for ${req.method} ${req.url}` });
      return;
    }
    let apiKey: unknown;
    try {
      apiKey = (JSON.parse(text) as { api_key?: unknown }).api_key;
    } catch {
      send(res, 400, { error: 'request body: is not valid JSON' });
      return;
    }
    const current = fault;
    calls.push({
      fault: current.kind,
      apiKey,
      url: req.url ?? '',
      headerText: req.rawHeaders.join('\n'),
    });
    switch (current.kind) {
      case 'ok':
        return forward(res, text);
      case 'slow':
        setTimeout(() => void forward(res, text), current.ms);
        return;
      case 'hang':
        return; // Answered by nobody; the socket is destroyed when the service closes.
      case 'status':
        return send(res, current.status, current.body);
      case 'html':
        res.writeHead(current.status, { 'content-type': 'text/html' });
        res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
        return;
      case 'malformed':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"result": [{"Count": 3}], "metadata": {');
        return;
      case 'close':
        req.socket.destroy();
        return;
      case 'close-mid-response':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '4096' });
        res.write('{"result": [{"Count": 3}], "meta');
        setTimeout(() => req.socket.destroy(), 20);
        return;
      case 'redirect':
        res.writeHead(302, { location: 'http://127.0.0.1:9/elsewhere' });
        res.end();
        return;
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    set(next) {
      fault = next;
    },
    down: stop,
    up: () => listen(port),
    close: async () => {
      if (server.listening) await stop();
    },
  };
}
