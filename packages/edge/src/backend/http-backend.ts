import { type Backend, BackendError, readCollections, readEnvelope } from './backend.ts';
import { inlineSqlParameters } from './sql-literal.ts';

/** Options of {@link httpBackend}. */
export interface HttpBackendOptions {
  /** The service's base URL, e.g. `https://analytics.example.com` (a path prefix is kept). */
  baseUrl: string;
  /** The workspace key; sent only as `api_key` in the JSON body, as the spec requires. */
  apiKey: string;
  /** Time limit of one attempt in milliseconds. @default 10000 */
  timeoutMs?: number;
  /** Further attempts after a time-out, network failure or 5xx. @default 2 */
  retries?: number;
  /** First back-off delay in milliseconds; doubles each retry, with jitter. @default 100 */
  backoffMs?: number;
  /** The fetch to use (tests, proxies). @default globalThis.fetch */
  fetch?: typeof fetch;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * The hosted service (or a self-hosted engine) over HTTP: `POST {baseUrl}/api/visualize/data`
 * with the key in the body (and `POST {baseUrl}/api/collections` for
 * `analytics-edge check`). SQL parameters are written into the SQL as typed literals
 * ({@link inlineSqlParameters}), since the service's API has no bind parameters. Retries time-outs, network failures and 5xx with exponential
 * back-off; `Invalid API KEY` and other 4xx are final at once.
 */
export function httpBackend(options: HttpBackendOptions): Backend {
  const { apiKey } = options;
  if (typeof apiKey !== 'string' || apiKey.trim() === '') {
    throw new Error('httpBackend: apiKey is missing (set ANALYTICS_API_KEY)');
  }
  if (apiKey !== apiKey.trim()) {
    throw new Error(
      'httpBackend: apiKey has leading or trailing whitespace; the service would reject it',
    );
  }
  let baseHref: string;
  try {
    const base = new URL(options.baseUrl);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error();
    baseHref = base.href.replace(/\/+$/, '');
  } catch {
    throw new Error(`httpBackend: baseUrl '${options.baseUrl}' is not an http(s) URL`);
  }
  const timeoutMs = options.timeoutMs ?? 10_000;
  const retries = options.retries ?? 2;
  const backoffMs = options.backoffMs ?? 100;
  const doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));

  const dataEndpoint = `${baseHref}/api/visualize/data`;
  const collectionsEndpoint = `${baseHref}/api/collections`;

  /** One POST of `payload` to `endpoint`, its answer read by `read`. */
  async function attempt<T>(
    endpoint: string,
    payload: string,
    read: (status: number, body: unknown) => T,
    signal?: AbortSignal,
  ): Promise<T> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort);
    try {
      const response = await doFetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: payload,
        signal: controller.signal,
        // Workers implement only 'follow' and 'manual'; a redirect is refused by hand below.
        redirect: 'manual',
      });
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        throw new BackendError(
          'refused',
          `HTTP ${response.status}: the service redirected; check ANALYTICS_BASE_URL`,
          response.status,
        );
      }
      const text = await response.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        if (response.status >= 500) {
          throw new BackendError('unavailable', `HTTP ${response.status}`, response.status);
        }
        throw new BackendError(
          'malformed',
          `HTTP ${response.status} with a body that is not JSON`,
          response.status,
        );
      }
      return read(response.status, body);
    } catch (error) {
      if (error instanceof BackendError) throw error;
      if (timedOut) throw new BackendError('timeout', `no answer within ${timeoutMs} ms`);
      if (signal?.aborted) throw new BackendError('timeout', 'the request was cancelled');
      throw new BackendError('unavailable', `network failure: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  async function withRetries<T>(
    call: (signal?: AbortSignal) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    for (let n = 0; ; n++) {
      try {
        return await call(signal);
      } catch (error) {
        const failure = error as BackendError;
        if (!failure.retryable || n >= retries || signal?.aborted) throw failure;
        const delay = backoffMs * 2 ** n;
        await sleep(delay / 2 + Math.random() * delay, signal);
      }
    }
  }

  return {
    secrets: [apiKey],
    async query(body, signal) {
      let inlined: Record<string, unknown>;
      try {
        // The hosted service's API has no bind parameters: values travel as typed literals.
        inlined = inlineSqlParameters(body);
      } catch (error) {
        throw new BackendError('refused', `SQL parameters: ${(error as Error).message}`);
      }
      const payload = JSON.stringify({ ...inlined, api_key: apiKey });
      return withRetries((s) => attempt(dataEndpoint, payload, readEnvelope, s), signal);
    },
    collections(signal) {
      const payload = JSON.stringify({ api_key: apiKey });
      return withRetries((s) => attempt(collectionsEndpoint, payload, readCollections, s), signal);
    },
  };
}
