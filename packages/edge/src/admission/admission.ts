import type { Context } from 'hono';
import type { EdgeSettings } from '../config/edge-config.ts';
import { type Deny, denier } from '../http/deny.ts';
import type { Step } from '../http/pipeline.ts';
import type { Logger } from '../log/logger.ts';
import { checkAskingSite, checkAudience } from '../protection/audience.ts';
import { limitId } from '../protection/id-limit.ts';
import { limitClient, type RequestLimits } from '../protection/request-limits.ts';
import { type Revocation, refuseRevoked } from '../protection/revocation.ts';
import type { CompiledDefinition } from '../registry/compile-definition.ts';
import type { Session } from '../session/session.ts';
import {
  checkSession,
  type ReadSession,
  requirePublic,
  requireSession,
  requireSessionBound,
} from '../session/session-check.ts';
import type { EmbedTickets } from '../tokens/embed-ticket.ts';
import type { Keyring } from '../tokens/keyring.ts';
import {
  API_ID_MESSAGES,
  type IdMessages,
  type VerifiedId,
  type VerifiedIds,
  verifiedIds,
  verifyId,
} from '../tokens/verified-ids.ts';

/**
 * A request being admitted, as the admission steps fill it in: the context and the clock
 * reading, the verified id, the session once read, and the embed page's ticket when it has one.
 * Each route's own request type extends it.
 */
export interface Admission {
  readonly c: Context;
  readonly nowMs: number;
  verified: VerifiedId;
  session?: Session | undefined;
  readonly ticket?: string | undefined;
}

/** What the admission steps are built from: the same for every route of one edge. */
export interface AdmissionParts {
  settings: EdgeSettings;
  logger: Logger;
  keyring: Keyring;
  registry: ReadonlyMap<string, CompiledDefinition>;
  limits: RequestLimits;
  revocation: Revocation;
  readSession: ReadSession;
  tickets: EmbedTickets;
  /**
   * Checks every route runs on every id right after the built-in ones (revocation): the one
   * place a new rule about ids goes.
   */
  idChecks?: readonly Step<Admission>[];
}

/** How one route words its refusals, logs them, and finds its id. */
export interface AdmissionRoute<R extends Admission> {
  /** The log event of its refusals (`data.denied`, `embed.denied`…). */
  event: string;
  /** What a refused id is told; the API wording when not given. */
  messages?: IdMessages;
  /** Where the id is: the bearer header unless given. */
  tokenOf?: (request: R) => string;
  /** Seconds past expiry an id is still admitted (renewal only). */
  acceptExpiredFor?: number;
}

/** The admission steps of one route: shared factories, bound to the route's words. */
export interface RouteAdmission<R extends Admission> {
  deny: Deny;
  /** The route's memory of verified ids (cleared with its caches). */
  ids: VerifiedIds;
  /** The client's per-address bucket, shared by every route. */
  limitClient: Step<R>;
  /** The id verified, then every check any id must pass wherever it is used. */
  admitId: readonly Step<R>[];
  /** The id's bucket (per address for a public id), shared by the data route and embeds. */
  limitId: Step<R>;
  /** Only public ids; `message` and `status` are the route's. */
  requirePublic(message: string, status?: number): Step<R>;
  /** Only session-bound ids. */
  requireSessionBound: Step<R>;
  /** `Origin` within the id's audience, or a sandboxed frame with its embed page's ticket. */
  checkAudience: Step<R>;
  /** oEmbed: the asking site (when the consumer names it) within the id's audience. */
  checkAskingSite: Step<R>;
  /** A signed-in viewer, kept for later steps. */
  requireSession: Step<R>;
  /** A session-bound id only for its own, still-entitled session. */
  checkSession: Step<R>;
}

/**
 * The admission steps for one route. Every route builds its checks here, from the same step
 * functions in the same order, so a new check is written once and each route composes it.
 */
export function routeAdmission<R extends Admission>(
  parts: AdmissionParts,
  route: AdmissionRoute<R>,
): RouteAdmission<R> {
  const deny = denier(parts.logger, route.event);
  const messages = route.messages ?? API_ID_MESSAGES;
  const ids = verifiedIds({
    keyring: parts.keyring,
    registry: parts.registry,
    settings: parts.settings,
    deny,
    messages,
    ...(route.acceptExpiredFor ? { acceptExpiredFor: route.acceptExpiredFor } : {}),
  });
  return {
    deny,
    ids,
    limitClient: limitClient(parts.limits),
    admitId: [
      verifyId<R>(ids, route.tokenOf),
      refuseRevoked(parts.revocation, deny, messages.invalid),
      ...(parts.idChecks ?? []),
    ],
    limitId: limitId(parts.limits),
    requirePublic: (message, status) => requirePublic(deny, message, status),
    requireSessionBound: requireSessionBound(deny),
    checkAudience: checkAudience(deny, parts.tickets, parts.limits),
    checkAskingSite: checkAskingSite(deny),
    requireSession: requireSession(parts.readSession),
    checkSession: checkSession(parts.readSession, deny),
  };
}
