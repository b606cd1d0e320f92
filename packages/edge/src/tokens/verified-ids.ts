import type { Context } from 'hono';
import type { EdgeSettings } from '../config/edge-config.ts';
import type { Deny } from '../http/deny.ts';
import { EdgeError } from '../http/edge-error.ts';
import type { Step } from '../http/pipeline.ts';
import { fingerprint } from '../log/logger.ts';
import { Lru } from '../protection/lru.ts';
import { type CompiledDefinition, compileDefinition } from '../registry/compile-definition.ts';
import type { ResolvedQuery } from '../registry/resolve-query.ts';
import type { Keyring } from './keyring.ts';
import type { QueryIdClaims } from './query-id-claims.ts';
import { verifyQueryId } from './verify-query-id.ts';

/** A verified id remembered until its expiry, with its definition and what later steps derive. */
export interface VerifiedId {
  claims: QueryIdClaims;
  kid: string;
  compiled: CompiledDefinition;
  /** Resolved queries by range key ('' when the definition has no ranges). */
  resolved: Map<string, ResolvedQuery>;
  /** The audience as a list, when the id has one. */
  audience: readonly string[] | undefined;
  /**
   * The per-id bucket key of a session-bound id, built once (a reused string keeps its hash
   * cached); public ids have one bucket per client address instead, kept in `buckets`.
   */
  bucket: string;
  buckets: Map<string, string> | undefined;
  /** What logs call this id: its jti. */
  tag: string;
}

/** What {@link verifiedIds} needs: the keys, the registry, the id settings and how to refuse. */
export interface VerifiedIdsParts {
  keyring: Keyring;
  registry: ReadonlyMap<string, CompiledDefinition>;
  settings: Pick<
    EdgeSettings,
    'verifiedCacheSize' | 'clockSkewSeconds' | 'maxIdLength' | 'inlineDefinitions'
  >;
  deny: Deny;
  /** What refusals say; the data route's API wording when not given. */
  messages?: IdMessages;
  /**
   * Seconds past expiry an id is still accepted (renewal), and then an id expired longer ago is
   * refused as `invalid`: it cannot be renewed, so `expired` would invite a renewal that fails.
   */
  acceptExpiredFor?: number;
}

/** What a refused id is told, by reason: the embed page words these for people. */
export interface IdMessages {
  invalid: string;
  expired: string;
  tooLong: string;
  unknownQuery: string;
  inlineOff: string;
}

/** The data route's wording, for API clients. */
export const API_ID_MESSAGES: IdMessages = {
  invalid: 'The query id is not valid.',
  expired: 'The query id has expired.',
  tooLong: 'The query id is too long.',
  unknownQuery: 'The query this id names does not exist (any more).',
  inlineOff: 'This edge does not accept inline definitions.',
};

/** A route's memory of verified ids. */
export interface VerifiedIds {
  /** The verified id of a bearer token at `now` (Unix seconds); synchronous when remembered. */
  verify(token: string, now: number): VerifiedId | Promise<VerifiedId>;
  /** Forgets every remembered id. */
  clear(): void;
}

/**
 * Verifies query ids and remembers the good ones, so a repeated id skips only the HMAC: expiry
 * and the key's presence in the keyring are checked on every use.
 */
export function verifiedIds(parts: VerifiedIdsParts): VerifiedIds {
  const { keyring, registry, settings } = parts;
  // Annotated so that TypeScript knows a call never returns.
  const deny: Deny = parts.deny;
  const messages = parts.messages ?? API_ID_MESSAGES;
  const grace = parts.acceptExpiredFor ?? 0;
  const expiredCode = grace > 0 ? 'invalid' : 'expired';
  const memory = new Lru<string, VerifiedId>(settings.verifiedCacheSize);

  function remembered(token: string, now: number): VerifiedId | undefined {
    const hit = memory.get(token);
    if (!hit) return undefined;
    if (hit.claims.exp + grace <= now) {
      memory.delete(token);
      deny(expiredCode, messages.expired, hit.tag, 'expired');
    }
    if (!keyring.has(hit.kid)) {
      memory.delete(token);
      deny('invalid', messages.invalid, hit.tag, `key ${hit.kid} was removed`);
    }
    return hit;
  }

  async function verifyFresh(token: string, now: number): Promise<VerifiedId> {
    const outcome = await verifyQueryId(token, keyring, {
      now,
      skewSeconds: settings.clockSkewSeconds,
      maxLength: settings.maxIdLength,
      ...(grace > 0 ? { acceptExpiredFor: grace } : {}),
    });
    if (!outcome.ok) {
      const tag = outcome.jti ?? fingerprint(token);
      if (outcome.code === 'expired') deny(expiredCode, messages.expired, tag, 'expired');
      deny('invalid', messages.invalid, tag, outcome.reason);
    }
    const { claims, kid } = outcome;
    let compiled: CompiledDefinition | undefined;
    if (claims.q !== undefined) {
      compiled = registry.get(claims.q);
      if (!compiled) {
        deny('not_found', messages.unknownQuery, claims.jti, `no query named ${claims.q}`);
      }
    } else {
      if (!settings.inlineDefinitions) {
        deny('forbidden', messages.inlineOff, claims.jti, 'inline definitions are off');
      }
      try {
        compiled = compileDefinition(claims.d, undefined);
      } catch (error) {
        deny('invalid', messages.invalid, claims.jti, (error as Error).message);
      }
    }
    const entry: VerifiedId = {
      claims,
      kid,
      compiled,
      resolved: new Map(),
      audience: claims.aud === undefined ? undefined : [claims.aud].flat(),
      bucket: `id:${claims.jti}`,
      buckets: claims.pub === true ? new Map() : undefined,
      tag: claims.jti,
    };
    memory.set(token, entry);
    return entry;
  }

  return {
    verify(token, now) {
      if (token.length > settings.maxIdLength) {
        deny('invalid', messages.tooLong, fingerprint(token), 'too long');
      }
      return remembered(token, now) ?? verifyFresh(token, now);
    },
    clear: () => memory.clear(),
  };
}

/** The query id a request carries as `Authorization: Bearer <id>`. */
export function bearerToken(c: Context): string {
  const auth = c.req.header('authorization');
  if (auth?.slice(0, 7).toLowerCase() !== 'bearer ') {
    throw new EdgeError('invalid', 'Send the query id as Authorization: Bearer <id>.');
  }
  return auth.slice(7).trim();
}

/**
 * Step: the request's query id, found by `tokenOf` (the bearer header unless given), verified
 * (or remembered) at the request's clock.
 */
export function verifyId<
  R extends { readonly c: Context; readonly nowMs: number; verified: VerifiedId },
>(
  ids: VerifiedIds,
  tokenOf: (request: R) => string = (request) => bearerToken(request.c),
): Step<R> {
  return (request) => {
    const found = ids.verify(tokenOf(request), Math.floor(request.nowMs / 1000));
    if (!(found instanceof Promise)) {
      request.verified = found;
      return undefined;
    }
    return found.then((verified) => {
      request.verified = verified;
    });
  };
}
