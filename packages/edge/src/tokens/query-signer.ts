import type { ParamValue } from '@analytics-chart/protocol';
import {
  type CompiledDefinition,
  checkSignerValue,
  checkSqlParamValue,
  compileDefinition,
} from '../registry/compile-definition.ts';
import type { QueryDefinition } from '../registry/query-definition.ts';
import type { Keyring } from './keyring.ts';
import { parseTtl } from './parse-ttl.ts';
import type { QueryIdClaims } from './query-id-claims.ts';
import { newJti, signClaims } from './sign-query-id.ts';

/** What to sign: a registry query (or an inline definition) for a session subject or the public. */
export interface SignQueryIdOptions {
  /** A registry query name. */
  query?: string;
  /** An inline definition instead of a registry name (travels in the id). */
  definition?: QueryDefinition;
  /** Values of the definition's parameters, both session and signer ones (the caller is trusted). */
  params?: Readonly<Record<string, ParamValue>>;
  /** Bind the id to this session subject: the data route then requires the same session. */
  subject?: string;
  /** A public id (CMS embeds): no session check, long-lived, revocable by jti or key rotation. */
  public?: boolean;
  /** Lifetime: `10m`, `30d`, or seconds. Defaults to the edge's session or public lifetime. */
  ttl?: string | number;
  /** The range key the chart opens with. */
  range?: string;
  /** Origins allowed to show the chart (the `aud` claim). */
  audience?: string | readonly string[];
}

/** A freshly signed id. */
export interface SignedQueryId {
  id: string;
  /** ISO instant. */
  expiresAt: string;
  jti: string;
  /** What it carries, for the registry of issued ids. */
  claims: QueryIdClaims;
}

/** Thrown when the options cannot make an id; `kind` picks the HTTP status on the sign route. */
export class SignError extends Error {
  override name = 'SignError';
  readonly kind: 'bad_request' | 'not_found' | 'forbidden';
  constructor(kind: SignError['kind'], message: string) {
    super(message);
    this.kind = kind;
  }
}

/** Lifetimes the signer applies, in seconds. */
export interface SignerLifetimes {
  sessionTtl: number;
  maxSessionTtl: number;
  publicTtl: number;
}

/**
 * Mints signed query ids: checks the options against the definition (every parameter has a
 * fitting value, the range exists, the lifetime is allowed), then signs with the current key.
 * Shared by the edge (`signQueryId`, the sign and renew routes) and the CLI.
 */
export function createQuerySigner(
  keyring: Keyring,
  registry: ReadonlyMap<string, CompiledDefinition>,
  lifetimes: SignerLifetimes,
) {
  function definitionOf(options: SignQueryIdOptions): CompiledDefinition {
    if ((options.query === undefined) === (options.definition === undefined)) {
      throw new SignError(
        'bad_request',
        'give either a registry query name or an inline definition',
      );
    }
    if (options.query !== undefined) {
      const compiled = registry.get(options.query);
      if (!compiled) throw new SignError('not_found', `there is no query named '${options.query}'`);
      return compiled;
    }
    try {
      return compileDefinition(options.definition, undefined);
    } catch (error) {
      throw new SignError('bad_request', (error as Error).message);
    }
  }

  function lockedParams(compiled: CompiledDefinition, given: Readonly<Record<string, ParamValue>>) {
    const out: Record<string, ParamValue> = {};
    for (const name of Object.keys(given)) {
      if (!Object.hasOwn(compiled.params, name)) {
        throw new SignError('bad_request', `parameter '${name}' is not one this query takes`);
      }
    }
    for (const [name, spec] of Object.entries(compiled.params)) {
      const value = Object.hasOwn(given, name) ? given[name] : undefined;
      if (spec.from === 'session') {
        if (typeof value !== 'string' && typeof value !== 'number') {
          throw new SignError(
            'forbidden',
            `parameter '${name}' comes from the session, which has none`,
          );
        }
        const problem = checkSqlParamValue(compiled, name, value);
        if (problem) {
          throw new SignError(
            'forbidden',
            `parameter '${name}' comes from the session, which holds no fitting value (${problem})`,
          );
        }
        out[name] = value;
        continue;
      }
      if (value === undefined) {
        if (spec.default === undefined) {
          throw new SignError('bad_request', `parameter '${name}' is required`);
        }
        out[name] = spec.default;
        continue;
      }
      const problem = checkSignerValue(spec, value) ?? checkSqlParamValue(compiled, name, value);
      if (problem) throw new SignError('bad_request', `parameter '${name}' ${problem}`);
      out[name] = value;
    }
    return out;
  }

  return {
    /** Validates the options and signs; throws {@link SignError}. */
    async sign(
      options: SignQueryIdOptions,
      nowSeconds = Math.floor(Date.now() / 1000),
    ): Promise<SignedQueryId> {
      const compiled = definitionOf(options);
      const isPublic = options.public === true;
      if (isPublic === (options.subject !== undefined)) {
        throw new SignError('bad_request', 'an id is either public or bound to a session subject');
      }
      if (
        options.subject !== undefined &&
        (options.subject === '' || options.subject.length > 200)
      ) {
        throw new SignError('bad_request', 'subject must be 1-200 characters');
      }
      const p = lockedParams(compiled, options.params ?? {});
      if (options.range !== undefined && !compiled.rangeKeys.includes(options.range)) {
        throw new SignError(
          'bad_request',
          compiled.rangeKeys.length
            ? `range '${options.range}' is not one of ${compiled.rangeKeys.join(', ')}`
            : 'this query has no ranges to choose from',
        );
      }
      const ttl =
        options.ttl === undefined
          ? isPublic
            ? lifetimes.publicTtl
            : lifetimes.sessionTtl
          : parseTtl(options.ttl);
      if (ttl === null)
        throw new SignError('bad_request', 'ttl is not a lifetime such as 10m or 30d');
      if (!isPublic && ttl > lifetimes.maxSessionTtl) {
        throw new SignError(
          'bad_request',
          `a session-bound id lives at most ${lifetimes.maxSessionTtl} seconds`,
        );
      }
      const jti = newJti();
      const claims: QueryIdClaims = {
        ...(compiled.name !== undefined
          ? { q: compiled.name }
          : { d: compiled.definition as unknown as Record<string, unknown> }),
        ...(Object.keys(p).length ? { p } : {}),
        ...(isPublic ? { pub: true } : { sub: options.subject }),
        iat: nowSeconds,
        exp: nowSeconds + ttl,
        jti,
      };
      if (options.range !== undefined) claims.r = options.range;
      if (options.audience !== undefined) {
        const aud =
          typeof options.audience === 'string' ? [options.audience] : [...options.audience];
        for (const origin of aud) {
          if (!/^https?:\/\/[^/\s]+$/.test(origin)) {
            throw new SignError(
              'bad_request',
              `audience '${origin}' is not an origin such as https://example.com`,
            );
          }
        }
        claims.aud = aud.length === 1 ? (aud[0] as string) : aud;
      }
      return {
        id: await signClaims(claims, keyring),
        expiresAt: new Date((nowSeconds + ttl) * 1000).toISOString(),
        jti,
        claims,
      };
    },

    /** Re-signs the claims of a verified id with a new jti, issue time and expiry. */
    async reissue(claims: QueryIdClaims, ttl: number, nowSeconds = Math.floor(Date.now() / 1000)) {
      const jti = newJti();
      const next: QueryIdClaims = { ...claims, iat: nowSeconds, exp: nowSeconds + ttl, jti };
      delete next.nbf;
      return {
        id: await signClaims(next, keyring),
        expiresAt: new Date((nowSeconds + ttl) * 1000).toISOString(),
        jti,
        claims: next,
      };
    },
  };
}

/** The signer {@link createQuerySigner} returns. */
export type QuerySigner = ReturnType<typeof createQuerySigner>;
