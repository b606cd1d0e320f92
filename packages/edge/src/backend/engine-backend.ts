import type { Backend } from './backend.ts';
import { BackendError, readEnvelope } from './backend.ts';

/**
 * What the edge needs of the engine: its `query` (the engine package's `Engine.query`), which
 * answers a request body exactly as its HTTP endpoint would. Typed structurally so the edge's
 * runtime code never imports the engine (a Workers build must not pull DuckDB in).
 */
export interface QueryableEngine {
  query(body: unknown): Promise<{ status: number; body: unknown }>;
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
  return {
    secrets: [apiKey],
    async query(body) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new BackendError('timeout', `no answer within ${timeoutMs} ms`)),
          timeoutMs,
        );
      });
      try {
        let answer: { status: number; body: unknown };
        try {
          answer = await Promise.race([engine.query({ ...body, api_key: apiKey }), deadline]);
        } catch (error) {
          if (error instanceof BackendError) throw error;
          throw new BackendError('unavailable', `engine failure: ${(error as Error).message}`);
        }
        return readEnvelope(answer.status, answer.body);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
