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

/** Throws the 429 for a refused decision. */
function refuse(retryAfter: number): never {
  throw new EdgeError('rate_limited', 'Too many requests; try again shortly.', { retryAfter });
}

/**
 * Takes one token from a bucket or throws the 429. Synchronous when the store is (the in-memory
 * one is), so the hot path pays no extra await; a promise only for shared stores.
 */
export function limit(
  runtime: EdgeRuntime,
  key: string,
  rule: RateRule | false,
  nowMs: number,
): undefined | Promise<void> {
  if (rule === false) return undefined;
  const decision = runtime.rateStore.take(key, rule, nowMs);
  if (decision instanceof Promise) {
    return decision.then((d) => {
      if (!d.allowed) refuse(d.retryAfterSeconds);
    });
  }
  if (!decision.allowed) refuse(decision.retryAfterSeconds);
  return undefined;
}

const ipKeys = new Map<string, string>();

/** `ip:<address>`, reusing one string per address so the bucket lookup hashes nothing new. */
function ipKey(address: string | undefined): string {
  const ip = address ?? 'unknown';
  let key = ipKeys.get(ip);
  if (key === undefined) {
    key = `ip:${ip}`;
    if (ipKeys.size >= 10_000) ipKeys.clear();
    ipKeys.set(ip, key);
  }
  return key;
}

/** The per-IP bucket shared by every API route. */
export function limitIp(
  runtime: EdgeRuntime,
  c: Context,
  nowMs: number,
): undefined | Promise<void> {
  if (runtime.settings.perIp === false) return undefined;
  return limit(runtime, ipKey(runtime.clientIp(c)), runtime.settings.perIp, nowMs);
}

/**
 * The per-id bucket of a public id for one client address: a public id is shown to many viewers,
 * so each address has its own. The data route and the embed page share it.
 */
export function publicIdBucket(jti: string, address: string | undefined): string {
  return `id:${jti}:${address ?? 'unknown'}`;
}

/**
 * Whether an id is revoked: in the edge's own list, or by the `isRevoked` hook. Synchronous
 * without a hook, so the data route's hot path pays no await. A hook that throws means the list
 * could not be read: a 502 and a log line, never a silent "not revoked".
 */
export function isRevokedNow(runtime: EdgeRuntime, jti: string): boolean | Promise<boolean> {
  if (runtime.revoked.has(jti)) return true;
  const hook = runtime.config.isRevoked;
  if (!hook) return false;
  return (async () => {
    try {
      return Boolean(await hook(jti));
    } catch (error) {
      runtime.logger.log({
        level: 'error',
        event: 'revocation.check_failed',
        message: `The revocation hook failed: ${(error as Error)?.message ?? String(error)}`,
      });
      throw new EdgeError('backend', 'This chart could not be checked; try again shortly.');
    }
  })();
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
 * session must equal the id's `tenant` parameter (the only check for an inline definition, which
 * has no registry entry).
 */
export function sessionMismatch(
  session: Session,
  locked: Readonly<Record<string, unknown>> | undefined,
  compiled: CompiledDefinition | undefined,
): string | null {
  const p = locked ?? {};
  for (const [name, spec] of Object.entries(compiled?.params ?? {})) {
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
