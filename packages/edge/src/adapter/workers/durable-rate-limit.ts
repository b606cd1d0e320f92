import * as z from 'zod';
import { consoleLogSink, type LogSink } from '../../log/logger.ts';
import {
  memoryRateLimitStore,
  type RateDecision,
  type RateLimitStore,
} from '../../protection/rate-limit.ts';

/**
 * Rate limits shared by every isolate of a Worker. A Worker runs in many isolates at once (one
 * or more per data centre), each with its own memory, so in-memory buckets limit each isolate,
 * not the deployment. A Durable Object is a single instance the whole deployment talks to: one
 * per bucket key holds that bucket, and Cloudflare runs its requests one at a time.
 */

/** What the store sends the object. */
const TakeRequest = z.object({
  key: z.string().max(2048),
  perSecond: z.number().positive().finite(),
  burst: z.number().min(1).finite(),
  nowMs: z.number().finite(),
});
type TakeRequest = z.infer<typeof TakeRequest>;

/** The part of a Durable Object namespace binding the store uses (no Workers types needed). */
export interface RateLimiterNamespace {
  idFromName(name: string): unknown;
  get(id: never): { fetch(input: string, init?: RequestInit): Promise<Response> };
}

/** Options of {@link durableObjectRateLimitStore}. */
export interface DurableRateLimitOptions {
  /**
   * Where the warning goes when the object cannot answer (overloaded, being moved, a deploy):
   * the request is then let through, since an outage of the limiter must not take every chart
   * down. The warning never holds the key (it holds client addresses). `createWorker` passes the
   * config's `log`. @default consoleLogSink
   */
  log?: LogSink;
}

const ALLOWED: RateDecision = Object.freeze({ allowed: true, retryAfterSeconds: 0 });

/**
 * A {@link RateLimitStore} backed by the Durable Object class {@link RateLimiterObject}, bound
 * as `namespace` (`createWorker` uses the `EDGE_RATE_LIMITER` binding by itself). One object per
 * bucket key, so buckets never contend with each other.
 */
export function durableObjectRateLimitStore(
  namespace: RateLimiterNamespace,
  options: DurableRateLimitOptions = {},
): RateLimitStore {
  const log = options.log ?? consoleLogSink;
  return {
    async take(key, rule, nowMs) {
      const body: TakeRequest = { key, perSecond: rule.perSecond, burst: rule.burst, nowMs };
      try {
        const stub = namespace.get(namespace.idFromName(key) as never);
        const response = await stub.fetch('https://rate-limiter/take', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (!response.ok) throw new Error(`the rate limiter answered ${response.status}`);
        const decision = (await response.json()) as Partial<RateDecision>;
        if (typeof decision.allowed !== 'boolean' || !Number.isFinite(decision.retryAfterSeconds)) {
          throw new Error('the rate limiter answered something else than a decision');
        }
        return decision as RateDecision;
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        log({ level: 'warn', event: 'edge.rate_limiter', message });
        return ALLOWED;
      }
    },
  };
}

/**
 * The Durable Object class behind {@link durableObjectRateLimitStore}: token buckets in its
 * memory (the same buckets as the in-memory store). Export it from the Worker's main module and
 * bind it as `EDGE_RATE_LIMITER` (see the Workers example's `wrangler.toml`). A bucket lost when
 * Cloudflare evicts an idle object comes back full, as a bucket that had time to refill would.
 */
export class RateLimiterObject {
  readonly #buckets = memoryRateLimitStore({ maxKeys: 1_000 });

  async fetch(request: Request): Promise<Response> {
    const take = TakeRequest.safeParse(await request.json().catch(() => undefined));
    if (!take.success) {
      return Response.json({ error: 'expected {key, perSecond, burst, nowMs}' }, { status: 400 });
    }
    const { key, perSecond, burst, nowMs } = take.data;
    return Response.json(this.#buckets.take(key, { perSecond, burst }, nowMs));
  }
}
