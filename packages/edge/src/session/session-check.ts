import type { Context } from 'hono';
import type { Deny } from '../http/deny.ts';
import { EdgeError } from '../http/edge-error.ts';
import type { Step } from '../http/pipeline.ts';
import type { Logger } from '../log/logger.ts';
import type { CompiledDefinition } from '../registry/compile-definition.ts';
import { signerRefusal } from '../registry/signer-rules.ts';
import type { VerifiedId } from '../tokens/verified-ids.ts';
import type { Authorize, Session } from './session.ts';

/** The current session of a request, or null when nobody is signed in. */
export type ReadSession = (c: Context) => Promise<Session | null>;

/**
 * Runs the session hook (none: nobody is ever signed in). A hook that throws means the session
 * could not be checked: that is a 502 (and a log line), never a silent "signed out" nor a silent
 * "signed in".
 */
export function sessionReader(authorize: Authorize | undefined, logger: Logger): ReadSession {
  return async (c) => {
    if (!authorize) return null;
    try {
      const session = await authorize(c);
      if (
        session !== null &&
        (typeof session !== 'object' || typeof session.subject !== 'string')
      ) {
        throw new Error('authorize returned a session without a string subject');
      }
      return session;
    } catch (error) {
      logger.log({
        level: 'error',
        event: 'session.check_failed',
        message: `The session hook failed: ${(error as Error).message}`,
      });
      throw new EdgeError('backend', 'Your session could not be checked; try again later.');
    }
  };
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

/** What a request carries once {@link requireSession} or {@link checkSession} has read the session. */
export interface WithSession {
  readonly c: Context;
  /** Undefined until a step reads it; then the viewer's session. */
  session?: Session | undefined;
}

/** Step: the viewer must be signed in (401 otherwise); the session is kept for later steps. */
export function requireSession(readSession: ReadSession): Step<WithSession> {
  return async (request) => {
    const session = await readSession(request.c);
    if (!session) throw new EdgeError('forbidden', 'Sign in first.', { status: 401 });
    request.session = session;
  };
}

/**
 * Step: a session-bound id is served only to the session it was issued to, while that session
 * still holds the id's session parameters and passes the definition's signers rule. Public ids
 * pass without a session. A session an earlier step read is used as it is.
 */
export function checkSession(
  readSession: ReadSession,
  deny: Deny,
): Step<WithSession & { readonly verified: VerifiedId }> {
  const check = async (request: WithSession, verified: VerifiedId): Promise<void> => {
    const { claims, compiled, tag } = verified;
    request.c.set('analyticsBearerIsQueryId', true);
    const session = request.session ?? (await readSession(request.c));
    if (!session) deny('forbidden', 'Sign in to see this chart.', tag, 'no session', 401);
    request.session = session;
    if (session.subject !== claims.sub) {
      deny('forbidden', 'This chart was issued to someone else.', tag, 'subject differs');
    }
    const mismatch =
      sessionMismatch(session, claims.p, compiled) ??
      (await signerRefusal(compiled, session, false));
    if (mismatch) deny('forbidden', 'This chart belongs to another account.', tag, mismatch);
  };
  return (request) =>
    request.verified.claims.pub === true ? undefined : check(request, request.verified);
}

/** Step: only a public id (`pub`) is admitted, in the route's words for a session-bound one. */
export function requirePublic(
  deny: Deny,
  message: string,
  status?: number,
): Step<{ readonly verified: VerifiedId }> {
  return ({ verified }) => {
    if (verified.claims.pub !== true) {
      deny('forbidden', message, verified.tag, 'session-bound id', status);
    }
  };
}

/** Step: only a session-bound id (`sub`, not `pub`) is admitted: public ids are never renewed. */
export function requireSessionBound(deny: Deny): Step<{ readonly verified: VerifiedId }> {
  return ({ verified }) => {
    if (verified.claims.pub === true || verified.claims.sub === undefined) {
      deny('forbidden', 'Public ids are not renewed.', verified.tag, 'public id');
    }
  };
}
