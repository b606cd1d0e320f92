import type { Context } from 'hono';
import * as z from 'zod';
import { EdgeError } from '../http/edge-error.ts';
import { jsonResponse } from '../http/respond.ts';
import type { Logger } from '../log/logger.ts';
import type { RequestLimits } from '../protection/request-limits.ts';
import type { Revocation } from '../protection/revocation.ts';
import type { Session } from '../session/session.ts';
import type { ReadSession } from '../session/session-check.ts';
import { type EdgeStore, JTI_PATTERN } from '../store/edge-store.ts';
import { fromStore as fromStoreOr503 } from '../store/from-store.ts';

/** Whether a signed-in session may manage issued ids (`admin` in the config). */
export type IsAdmin = (session: Session) => boolean | Promise<boolean>;

const listQuerySchema = z.strictObject({
  cursor: z
    .string()
    .regex(/^\d{1,9}$/, { error: 'cursor must be the `next` value of a previous page' })
    .optional(),
  limit: z.coerce
    .number({ error: 'limit must be a number' })
    .int({ error: 'limit must be a whole number' })
    .min(1, { error: 'limit must be 1-100' })
    .max(100, { error: 'limit must be 1-100' })
    .optional(),
});

const jtiSchema = z.string().regex(JTI_PATTERN, { error: 'That is not an id (jti).' });

/** What the admin routes are built from. */
export interface AdminRouteParts {
  logger: Logger;
  store: EdgeStore;
  revocation: Revocation;
  limits: RequestLimits;
  readSession: ReadSession;
  isAdmin: IsAdmin | undefined;
}

/**
 * The JSON admin API over the registry of issued ids: `GET /api/admin/ids?cursor=&limit=`,
 * `GET /api/admin/ids/:jti`, `POST /api/admin/ids/:jti/revoke`. Signed-in sessions the config's
 * admin rule accepts only: 401 without a session, 403 (nothing listed) for anyone else.
 */
export function adminRoutes(parts: AdminRouteParts) {
  const { logger, store, revocation, limits, readSession, isAdmin } = parts;

  /** The stages every admin request passes before it reads anything. */
  async function admit(c: Context): Promise<Session> {
    await limits.client(c, Date.now());
    const session = await readSession(c);
    if (!session) throw new EdgeError('forbidden', 'Sign in first.', { status: 401 });
    if (!isAdmin || !(await isAdmin(session))) {
      logger.log({ level: 'warn', event: 'admin.denied', message: 'not an admin' });
      throw new EdgeError('forbidden', 'Only administrators may manage ids.');
    }
    return session;
  }

  function jtiOf(c: Context): string {
    const parsed = jtiSchema.safeParse(c.req.param('jti'));
    if (!parsed.success) throw new EdgeError('bad_request', 'That is not an id (jti).');
    return parsed.data;
  }

  /** A store that cannot answer is a 503 the caller may retry, never a stack trace. */
  const fromStore = <T>(work: () => Promise<T>) =>
    fromStoreOr503(
      logger,
      'admin.store_failed',
      'The id registry is unavailable; try again shortly.',
      work,
    );

  return {
    async list(c: Context): Promise<Response> {
      await admit(c);
      const parsed = listQuerySchema.safeParse(c.req.query());
      if (!parsed.success) {
        throw new EdgeError('bad_request', `${parsed.error.issues[0]?.message ?? 'bad query'}.`);
      }
      const page = await fromStore(() => store.list(parsed.data.cursor, parsed.data.limit ?? 50));
      return jsonResponse(page);
    },
    async show(c: Context): Promise<Response> {
      await admit(c);
      const jti = jtiOf(c);
      const found = await fromStore(() => store.get(jti));
      if (!found) throw new EdgeError('not_found', 'No id by that jti is on record.');
      return jsonResponse(found);
    },
    async revoke(c: Context): Promise<Response> {
      const session = await admit(c);
      // As on sign: a JSON content type forces a CORS preflight, which these routes never
      // answer, so another site's form or script cannot revoke with an admin's cookie.
      if (!/^application\/json\b/i.test(c.req.header('content-type') ?? '')) {
        throw new EdgeError('bad_request', 'Send the request as application/json.', {
          status: 415,
        });
      }
      const jti = jtiOf(c);
      await fromStore(() => revocation.revoke(jti));
      logger.log({
        level: 'info',
        event: 'admin.revoked',
        message: `revoked by ${session.subject}`,
        id: jti,
      });
      return jsonResponse({ jti, revoked: true });
    },
  };
}
