import type { Context } from 'hono';
import type { Backend } from './backend/backend.ts';
import type { EdgeConfig, EdgeSettings } from './config/edge-config.ts';
import { EdgeError } from './http/edge-error.ts';
import type { Logger } from './log/logger.ts';
import type { RateLimitStore, RateRule } from './protection/rate-limit.ts';
import type { CompiledDefinition } from './registry/compile-definition.ts';
import type { Session } from './session/session.ts';
import type { Keyring } from './tokens/keyring.ts';
import type { QuerySigner } from './tokens/query-signer.ts';

/** The state an edge's routes share: built once by `createEdge`, internal to the package. */
export interface EdgeRuntime {
  config: EdgeConfig;
  settings: EdgeSettings;
  registry: ReadonlyMap<string, CompiledDefinition>;
  keyring: Keyring;
  signer: QuerySigner;
  backend: Backend;
  logger: Logger;
  rateStore: RateLimitStore;
  revoked: Set<string>;
  clientIp: (c: Context) => string | undefined;
}

/** Takes one token from a bucket or throws the 429. */
export async function limit(
  runtime: EdgeRuntime,
  key: string,
  rule: RateRule | false,
  nowMs: number,
): Promise<void> {
  if (rule === false) return;
  let decision = runtime.rateStore.take(key, rule, nowMs);
  if (decision instanceof Promise) decision = await decision;
  if (!decision.allowed) {
    throw new EdgeError('rate_limited', 'Too many requests; try again shortly.', {
      retryAfter: decision.retryAfterSeconds,
    });
  }
}

/** The per-IP bucket shared by every API route. */
export function limitIp(runtime: EdgeRuntime, c: Context, nowMs: number): Promise<void> {
  return limit(runtime, `ip:${runtime.clientIp(c) ?? 'unknown'}`, runtime.settings.perIp, nowMs);
}

/**
 * Runs the session hook. A hook that throws means the session could not be checked: that is a
 * 502 (and a log line), never a silent "signed out" nor a silent "signed in".
 */
export async function currentSession(runtime: EdgeRuntime, c: Context): Promise<Session | null> {
  const authorize = runtime.config.authorize;
  if (!authorize) return null;
  try {
    const session = await authorize(c);
    if (session !== null && (typeof session !== 'object' || typeof session.subject !== 'string')) {
      throw new Error('authorize returned a session without a string subject');
    }
    return session;
  } catch (error) {
    runtime.logger.log({
      level: 'error',
      event: 'session.check_failed',
      message: `The session hook failed: ${(error as Error).message}`,
    });
    throw new EdgeError('backend', 'Your session could not be checked; try again later.');
  }
}

/**
 * Why a session may not use an id's locked parameters, or null when it may: every parameter the
 * definition takes from the session must equal the session's value now, and a `tenant` in the
 * session must equal the id's `tenant` parameter.
 */
export function sessionMismatch(
  session: Session,
  locked: Readonly<Record<string, unknown>> | undefined,
  compiled: CompiledDefinition,
): string | null {
  const p = locked ?? {};
  for (const [name, spec] of Object.entries(compiled.params)) {
    if (spec.from !== 'session') continue;
    const claim = spec.claim ?? name;
    const value = Object.hasOwn(session, claim) ? session[claim] : undefined;
    if (value === undefined || value === null || String(value) !== String(p[name])) {
      return `${claim} does not match`;
    }
  }
  if (
    session.tenant !== undefined &&
    p.tenant !== undefined &&
    String(session.tenant) !== String(p.tenant)
  ) {
    return 'tenant does not match';
  }
  return null;
}
