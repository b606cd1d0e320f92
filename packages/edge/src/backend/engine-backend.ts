import { type Backend, BackendError, readCollections, readEnvelope } from './backend.ts';

/**
 * What the edge needs of the engine: its `query` (the engine package's `Engine.query`), which
 * answers a request body exactly as its HTTP endpoint would. Typed structurally so the edge's
 * runtime code never imports the engine (a Workers build must not pull DuckDB in).
 */
export interface QueryableEngine {
  query(body: unknown): Promise<{ status: number; body: unknown }>;
  /** `Engine.collections`: lets `analytics-edge check` see the workspace's collections. */
  collections?(body: unknown): Promise<{ status: number; body: unknown }>;
}

/** Options of {@link engineBackend}. */
export interface EngineBackendOptions {
  /** The workspace key the engine knows; added to each body as `api_key`. */
  apiKey: string;
  /** Time limit of one query in milliseconds. @default 10000 */
  timeoutMs?: number;
}

/**
 * The in-process engine as a backend: no HTTP hop, the same answers. The key still travels in
 * the body because the engine picks the workspace by it.
 */
export function engineBackend(engine: QueryableEngine, options: EngineBackendOptions): Backend {
  const { apiKey } = options;
  if (typeof apiKey !== 'string' || apiKey.trim() === '') {
    throw new Error('engineBackend: apiKey is missing (set ANALYTICS_API_KEY)');
  }
  const timeoutMs = options.timeoutMs ?? 10_000;

  /** One call of the engine within the time limit, its answer read by `read`. */
  async function call<T>(
    answer: () => Promise<{ status: number; body: unknown }>,
    read: (status: number, body: unknown) => T,
  ): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new BackendError('timeout', `no answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      let answered: { status: number; body: unknown };
      try {
        answered = await Promise.race([answer(), deadline]);
      } catch (error) {
        if (error instanceof BackendError) throw error;
        throw new BackendError('unavailable', `engine failure: ${(error as Error).message}`);
      }
      return read(answered.status, answered.body);
    } finally {
      clearTimeout(timer);
    }
  }

  const backend: Backend = {
    secrets: [apiKey],
    query: (body) => call(() => engine.query({ ...body, api_key: apiKey }), readEnvelope),
  };
  const { collections } = engine;
  if (collections) {
    backend.collections = () =>
      call(() => collections.call(engine, { api_key: apiKey }), readCollections);
  }
  return backend;
}
