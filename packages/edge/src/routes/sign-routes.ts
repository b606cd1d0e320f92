import { describeZodError, type ParamValue } from '@analytics-chart/protocol';
import type { Context } from 'hono';
import * as z from 'zod';
import { type Admission, type AdmissionParts, routeAdmission } from '../admission/admission.ts';
import { EdgeError } from '../http/edge-error.ts';
import { pipeline, type Step } from '../http/pipeline.ts';
import { jsonResponse } from '../http/respond.ts';
import type { CompiledDefinition } from '../registry/compile-definition.ts';
import { signerRefusal } from '../registry/signer-rules.ts';
import type { Session } from '../session/session.ts';
import { sessionMismatch } from '../session/session-check.ts';
import { type EdgeStore, LABEL_PATTERN, StoreUnavailableError } from '../store/edge-store.ts';
import { recordIssued } from '../store/record-issued.ts';
import { type QuerySigner, SignError } from '../tokens/query-signer.ts';
import { API_ID_MESSAGES } from '../tokens/verified-ids.ts';

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

function signFailure(error: unknown): never {
  if (error instanceof SignError) {
    throw new EdgeError(
      error.kind,
      `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`,
    );
  }
  throw error;
}

/**
 * A sign or renew request as its steps fill it in: the admission's fields (the session once
 * read, the verified id for renew) and the body once read.
 */
interface SignRequest<Body> extends Admission {
  body: Body;
}

/** Step: the JSON body, read and checked against `schema`. */
function readBodyStep<Body>(schema: z.ZodType<Body>): Step<SignRequest<Body>> {
  return async (request) => {
    request.body = await readBody(request.c, schema);
  };
}

/** What the sign routes are built from. */
export interface SignRouteParts extends AdmissionParts {
  registry: ReadonlyMap<string, CompiledDefinition>;
  signer: QuerySigner;
  store: EdgeStore;
}

type SignBody = z.infer<typeof signBodySchema>;
type RenewBody = z.infer<typeof renewBodySchema>;

/** `POST /api/sign` and `POST /api/renew`: ids for the signed-in viewer. */
export function signRoutes(parts: SignRouteParts) {
  const { registry, signer, settings, logger, store } = parts;

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

  const signAdmission = routeAdmission<SignRequest<SignBody>>(parts, { event: 'sign.denied' });
  const renewAdmission = routeAdmission<SignRequest<RenewBody>>(parts, {
    event: 'renew.denied',
    messages: { ...API_ID_MESSAGES, expired: 'The query id expired too long ago to renew.' },
    tokenOf: (request) => request.body.id,
    acceptExpiredFor: settings.renewGrace,
  });

  /** Mints a session-bound id; session parameters come from the session, never from the body. */
  async function mint(request: SignRequest<SignBody>): Promise<Response> {
    const { body } = request;
    const session = request.session as Session;
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
   * Re-issues an admitted session-bound id for the same subject and locked parameters with a
   * fresh expiry.
   */
  async function reissue(request: SignRequest<RenewBody>): Promise<Response> {
    const { claims } = request.verified;
    const session = request.session as Session;
    const now = Math.floor(request.nowMs / 1000);
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

  const sign = pipeline<SignRequest<SignBody>, Response>(
    [signAdmission.limitClient, signAdmission.requireSession, readBodyStep(signBodySchema)],
    mint,
  );

  /**
   * Renewal admits the id with the data route's steps: the signature good, at most `renewGrace`
   * past expiry, every id check (revocation…), session-bound, and the current session the one it
   * was issued to and still entitled to it.
   */
  const renew = pipeline<SignRequest<RenewBody>, Response>(
    [
      renewAdmission.limitClient,
      renewAdmission.requireSession,
      readBodyStep(renewBodySchema),
      ...renewAdmission.admitId,
      renewAdmission.requireSessionBound,
      renewAdmission.checkSession,
    ],
    reissue,
  );

  const newRequest = <Body>(c: Context) =>
    ({
      c,
      nowMs: Date.now(),
      verified: undefined,
      session: undefined,
      body: undefined,
    }) as unknown as SignRequest<Body>;

  return {
    sign: (c: Context) => sign(newRequest<SignBody>(c)),
    renew: (c: Context) => renew(newRequest<RenewBody>(c)),
  };
}
