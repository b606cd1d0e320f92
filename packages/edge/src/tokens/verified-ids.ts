import type { Context } from 'hono';
import type { EdgeSettings } from '../config/edge-config.ts';
import type { Deny } from '../http/deny.ts';
import { EdgeError } from '../http/edge-error.ts';
import type { Step } from '../http/pipeline.ts';
import { fingerprint, type Logger } from '../log/logger.ts';
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

/** What {@link verifiedIds} needs: the keys, the registry and the id settings. */
export interface VerifiedIdsParts {
  keyring: Keyring;
  registry: ReadonlyMap<string, CompiledDefinition>;
  settings: Pick<
    EdgeSettings,
    'verifiedCacheSize' | 'clockSkewSeconds' | 'maxIdLength' | 'inlineDefinitions'
  >;
  logger: Logger;
  deny: Deny;
}

/** The data route's memory of verified ids. */
export interface VerifiedIds {
  /** The verified id of a bearer token at `now` (Unix seconds); synchronous when remembered. */
  verify(token: string, now: number): VerifiedId | Promise<VerifiedId>;
  /** Forgets every remembered id. */
  clear(): void;
}

const INVALID = 'The query id is not valid.';

/**
 * Verifies query ids and remembers the good ones, so a repeated id skips only the HMAC: expiry
 * and the key's presence in the keyring are checked on every use.
 */
export function verifiedIds(parts: VerifiedIdsParts): VerifiedIds {
  const { keyring, registry, settings, logger } = parts;
  const deny: Deny = parts.deny;
  const memory = new Lru<string, VerifiedId>(settings.verifiedCacheSize);

  function remembered(token: string, now: number): VerifiedId | undefined {
    const hit = memory.get(token);
    if (!hit) return undefined;
    if (hit.claims.exp <= now) {
      memory.delete(token);
      deny('expired', 'The query id has expired.', hit.tag, 'expired');
    }
    if (!keyring.has(hit.kid)) {
      memory.delete(token);
      deny('invalid', INVALID, hit.tag, `key ${hit.kid} was removed`);
    }
    return hit;
  }

  async function verifyFresh(token: string, now: number): Promise<VerifiedId> {
    const outcome = await verifyQueryId(token, keyring, {
      now,
      skewSeconds: settings.clockSkewSeconds,
      maxLength: settings.maxIdLength,
    });
    if (!outcome.ok) {
      const tag = outcome.jti ?? fingerprint(token);
      if (outcome.code === 'expired') deny('expired', 'The query id has expired.', tag, 'expired');
      deny('invalid', INVALID, tag, outcome.reason);
    }
    const { claims, kid } = outcome;
    let compiled: CompiledDefinition | undefined;
    if (claims.q !== undefined) {
      compiled = registry.get(claims.q);
      if (!compiled) {
        logger.log({
          level: 'warn',
          event: 'data.unknown_query',
          message: `no query named ${claims.q}`,
          id: claims.jti,
        });
        throw new EdgeError('not_found', 'The query this id names does not exist (any more).');
      }
    } else {
      if (!settings.inlineDefinitions) {
        deny(
          'forbidden',
          'This edge does not accept inline definitions.',
          claims.jti,
          'inline definitions are off',
        );
      }
      try {
        compiled = compileDefinition(claims.d, undefined);
      } catch (error) {
        deny('invalid', INVALID, claims.jti, (error as Error).message);
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
        deny('invalid', 'The query id is too long.', fingerprint(token), 'too long');
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

/** Step: the request's query id, verified (or remembered) at the request's clock. */
export function verifyId(
  ids: VerifiedIds,
): Step<{ readonly c: Context; readonly nowMs: number; verified: VerifiedId }> {
  return (request) => {
    const found = ids.verify(bearerToken(request.c), Math.floor(request.nowMs / 1000));
    if (!(found instanceof Promise)) {
      request.verified = found;
      return undefined;
    }
    return found.then((verified) => {
      request.verified = verified;
    });
  };
}
