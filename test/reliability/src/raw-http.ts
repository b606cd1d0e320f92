/**
 * HTTP/1.1 over a plain TCP socket, byte for byte: hostile-input cases need bodies that are not
 * UTF-8, header values that `fetch` refuses to send, and an exact view of what came back
 * (including answers of Node's own HTTP parser, which never reach the app).
 */
import { connect } from 'node:net';

/** A request as raw parts. Header values and the body may be any bytes. */
export interface RawRequest {
  method: string;
  /** The request target, sent as is (percent-encode anything that is not visible ASCII). */
  path: string;
  headers?: ReadonlyArray<readonly [string, string | Buffer]>;
  body?: string | Buffer;
}

/** What came back: status, lower-cased headers, the de-chunked body. `status` 0: no answer. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  text: string;
  /** Why there was no answer (time-out, reset) when `status` is 0. */
  failure?: string;
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < data.length) {
    const end = data.indexOf('\r\n', at);
    if (end < 0) break;
    const size = Number.parseInt(data.subarray(at, end).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(data.subarray(end + 2, end + 2 + size));
    at = end + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/** Parses a complete HTTP/1.1 response (the connection was closed after it). */
export function parseResponse(data: Buffer): RawResponse {
  const split = data.indexOf('\r\n\r\n');
  const head = data.subarray(0, split < 0 ? data.length : split).toString('latin1');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) {
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
  }
  let body = split < 0 ? Buffer.alloc(0) : data.subarray(split + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
  else if (headers['content-length'] !== undefined) {
    body = body.subarray(0, Number(headers['content-length']));
  }
  return { status, headers, body, text: body.toString('utf8') };
}

/**
 * Sends one request on a new connection (`Connection: close`) and reads the answer until the
 * server closes. `Host` and `Content-Length` are added unless given.
 */
export function rawRequest(
  baseUrl: string,
  request: RawRequest,
  timeoutMs = 15_000,
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  const given = new Set((request.headers ?? []).map(([name]) => name.toLowerCase()));
  const lines: Buffer[] = [Buffer.from(`${request.method} ${request.path} HTTP/1.1\r\n`, 'latin1')];
  const header = (name: string, value: string | Buffer) =>
    lines.push(
      Buffer.concat([Buffer.from(`${name}: `, 'latin1'), Buffer.from(value), Buffer.from('\r\n')]),
    );
  if (!given.has('host')) header('Host', url.host);
  header('Connection', 'close');
  if (body !== undefined && !given.has('content-length'))
    header('Content-Length', String(body.length));
  for (const [name, value] of request.headers ?? []) header(name, value);
  lines.push(Buffer.from('\r\n'));
  const head = Buffer.concat(lines);

  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (failure?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const data = Buffer.concat(chunks);
      if (data.length === 0) {
        resolve({
          status: 0,
          headers: {},
          body: data,
          text: '',
          failure: failure ?? 'closed without an answer',
        });
        return;
      }
      resolve(parseResponse(data));
    };
    const socket = connect(Number(url.port), url.hostname);
    const timer = setTimeout(() => finish(`no answer within ${timeoutMs} ms`), timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    // A server may answer (413, 431) and close before reading the whole body: the write then
    // fails, and the answer may still be on its way in. Keep reading a moment.
    socket.on('error', (error) => setTimeout(() => finish(error.message), 300));
    socket.write(head);
    if (body !== undefined) {
      // In slices, stopping once an answer arrived: a server that refuses a large body early
      // closes the connection, and a reset would then discard its answer. Bodies of more than one
      // slice pause after the first, as a client waiting for `100 Continue` would.
      const slice = 64 * 1024;
      let at = 0;
      const pump = () => {
        while (at < body.length && chunks.length === 0 && !socket.destroyed) {
          const more = socket.write(body.subarray(at, at + slice));
          at += slice;
          if (at === slice && body.length > slice) {
            setTimeout(pump, 150);
            return;
          }
          if (!more) {
            socket.once('drain', pump);
            return;
          }
        }
      };
      pump();
    }
  });
}
