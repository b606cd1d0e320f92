import { describeZodError, type ParamValue } from '@analytics-chart/protocol';
import type { Context } from 'hono';
import * as z from 'zod';
import type { EdgeSettings } from '../config/edge-config.ts';
import { EdgeError } from '../http/edge-error.ts';
import { jsonResponse } from '../http/respond.ts';
import { fingerprint, type Logger } from '../log/logger.ts';
import type { RequestLimits } from '../protection/request-limits.ts';
import type { Revocation } from '../protection/revocation.ts';
import { type CompiledDefinition, compileDefinition } from '../registry/compile-definition.ts';
import { signerRefusal } from '../registry/signer-rules.ts';
import type { Session } from '../session/session.ts';
import { type ReadSession, sessionMismatch } from '../session/session-check.ts';
import { type EdgeStore, LABEL_PATTERN, StoreUnavailableError } from '../store/edge-store.ts';
import { recordIssued } from '../store/record-issued.ts';
import type { Keyring } from '../tokens/keyring.ts';
import { type QuerySigner, SignError } from '../tokens/query-signer.ts';
import { verifyQueryId } from '../tokens/verify-query-id.ts';

const paramValue = z.union([z.string().max(200), z.number(), z.boolean()]);

const signBodySchema = z.strictObject({
  query: z.string({ error: 'expected the name of a query' }).min(1).max(200),
  params: z.record(z.string().max(64), paramValue).optional(),
  range: z.string().max(64).optional(),
  ttl: z.union([z.string().max(20), z.number()]).optional(),
  label: z
    .string()
    .regex(LABEL_PATTERN, {
      error: 'label must be 1-200 characters of plain text (no control characters, < or >)',
    })
    .optional(),
});

const renewBodySchema = z.strictObject({
  id: z.string({ error: 'expected the id to renew' }).min(1).max(16_384),
});

/** Reads a JSON body (the content type is required, which also forces a CORS preflight). */
async function readBody<T>(c: Context, schema: z.ZodType<T>): Promise<T> {
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/json\b/i.test(type)) {
    throw new EdgeError('bad_request', 'Send the body as application/json.', { status: 415 });
  }
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw new EdgeError('bad_request', 'The request body is not valid JSON.');
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new EdgeError('bad_request', `${describeZodError(parsed.error)}.`);
  return parsed.data;
}

async function requireSession(readSession: ReadSession, c: Context): Promise<Session> {
  const session = await readSession(c);
  if (!session) throw new EdgeError('forbidden', 'Sign in first.', { status: 401 });
  return session;
}

function signFailure(error: unknown): never {
  if (error instanceof SignError) {
    throw new EdgeError(
      error.kind,
      `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`,
    );
  }
  throw error;
}

/** What the sign routes are built from. */
export interface SignRouteParts {
  settings: EdgeSettings;
  logger: Logger;
  keyring: Keyring;
  registry: ReadonlyMap<string, CompiledDefinition>;
  signer: QuerySigner;
  limits: RequestLimits;
  revocation: Revocation;
  readSession: ReadSession;
  store: EdgeStore;
}

/** `POST /api/sign` and `POST /api/renew`: ids for the signed-in viewer. */
export function signRoutes(parts: SignRouteParts) {
  const { registry, signer, settings, keyring, logger, limits, revocation, readSession, store } =
    parts;

  /** An id the registry cannot hold is not handed out: it could not be listed or managed. */
  async function record(claims: Parameters<typeof recordIssued>[1], by: string, label?: string) {
    try {
      await recordIssued(store, claims, by, label);
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      logger.log({ level: 'error', event: 'sign.record_failed', message: error.message });
      throw new EdgeError('backend', 'The id could not be recorded; try again shortly.', {
        status: 503,
        retryAfter: 1,
      });
    }
  }

  /** The definition an id names or carries; an inline one that no longer compiles is invalid. */
  function definitionOf(claims: { q?: string; d?: unknown }): CompiledDefinition | undefined {
    if (claims.q !== undefined) {
      const compiled = registry.get(claims.q);
      if (!compiled) {
        throw new EdgeError('not_found', 'The query this id names does not exist (any more).');
      }
      return compiled;
    }
    if (claims.d === undefined) return undefined;
    try {
      return compileDefinition(claims.d, undefined);
    } catch {
      throw new EdgeError('invalid', 'The query id is not valid.');
    }
  }

  /** Mints a session-bound id; session parameters come from the session, never from the body. */
  async function sign(c: Context): Promise<Response> {
    await limits.client(c, Date.now());
    const session = await requireSession(readSession, c);
    const body = await readBody(c, signBodySchema);
    const compiled = registry.get(body.query);
    if (!compiled) throw new EdgeError('not_found', `There is no query named '${body.query}'.`);
    const params: Record<string, ParamValue> = {};
    for (const [name, value] of Object.entries(body.params ?? {})) {
      const spec = compiled.params[name];
      if (spec?.from === 'session') {
        throw new EdgeError(
          'bad_request',
          `Parameter '${name}' comes from your session and cannot be set.`,
        );
      }
      params[name] = value;
    }
    for (const [name, spec] of Object.entries(compiled.params)) {
      if (spec.from !== 'session') continue;
      const value = session[spec.claim ?? name];
      if (typeof value !== 'string' && typeof value !== 'number') {
        throw new EdgeError(
          'forbidden',
          `Your session has no ${spec.claim ?? name}, which this query needs.`,
        );
      }
      params[name] = value;
    }
    // The same rules as the data route's, so an id the session could not use is never minted.
    const refusal =
      sessionMismatch(session, params, compiled) ?? (await signerRefusal(compiled, session, true));
    if (refusal) {
      logger.log({ level: 'warn', event: 'sign.denied', message: `${body.query}: ${refusal}` });
      throw new EdgeError('forbidden', 'Your session may not have this query.');
    }
    let signed: Awaited<ReturnType<typeof signer.sign>>;
    try {
      signed = await signer.sign({
        query: body.query,
        params,
        subject: session.subject,
        ...(body.ttl !== undefined ? { ttl: body.ttl } : {}),
        ...(body.range !== undefined ? { range: body.range } : {}),
      });
    } catch (error) {
      signFailure(error);
    }
    await record(signed.claims, session.subject, body.label);
    logger.log({
      level: 'info',
      event: 'sign.issued',
      message: `signed ${body.query}`,
      id: signed.jti,
    });
    return jsonResponse({ id: signed.id, expiresAt: signed.expiresAt });
  }

  /**
   * Re-issues a session-bound id for the same subject and locked parameters with a fresh expiry:
   * the signature must be good, the id at most `renewGrace` past expiry, not revoked, and the
   * current session must be the one it was issued to.
   */
  async function renew(c: Context): Promise<Response> {
    await limits.client(c, Date.now());
    const session = await requireSession(readSession, c);
    const { id } = await readBody(c, renewBodySchema);
    const now = Math.floor(Date.now() / 1000);
    const outcome = await verifyQueryId(id, keyring, {
      now,
      skewSeconds: settings.clockSkewSeconds,
      maxLength: settings.maxIdLength,
      acceptExpiredFor: settings.renewGrace,
    });
    if (!outcome.ok) {
      logger.log({
        level: 'warn',
        event: 'renew.denied',
        message: outcome.reason,
        id: outcome.jti ?? fingerprint(id),
      });
      throw new EdgeError(
        'invalid',
        outcome.code === 'expired'
          ? 'The query id expired too long ago to renew.'
          : 'The query id is not valid.',
      );
    }
    const { claims } = outcome;
    const deny = (message: string, reason: string): never => {
      logger.log({ level: 'warn', event: 'renew.denied', message: reason, id: claims.jti });
      throw new EdgeError('forbidden', message);
    };
    if (await revocation.isRevoked(claims.jti)) {
      logger.log({ level: 'warn', event: 'renew.denied', message: 'revoked', id: claims.jti });
      throw new EdgeError('invalid', 'The query id is not valid.');
    }
    if (claims.pub === true || claims.sub === undefined)
      deny('Public ids are not renewed.', 'public id');
    if (claims.sub !== session.subject)
      deny('This id was issued to someone else.', 'subject differs');
    const compiled = definitionOf(claims);
    const mismatch =
      sessionMismatch(session, claims.p, compiled) ??
      (compiled ? await signerRefusal(compiled, session, false) : null);
    if (mismatch) deny('This id belongs to another account.', mismatch);
    const lifetime = Math.min(Math.max(claims.exp - claims.iat, 60), settings.maxSessionTtl);
    const renewed = await signer.reissue(claims, lifetime, now);
    await record(renewed.claims, session.subject);
    logger.log({
      level: 'info',
      event: 'renew.issued',
      message: `renewed ${claims.jti}`,
      id: renewed.jti,
    });
    return jsonResponse({ id: renewed.id, expiresAt: renewed.expiresAt });
  }

  return { sign, renew };
}
