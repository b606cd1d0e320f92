import type { Context } from 'hono';
import type { Backend } from '../backend/backend.ts';
import type { LogSink } from '../log/logger.ts';
import type { RateLimitStore, RateRule } from '../protection/rate-limit.ts';
import type { QueryDefinition } from '../registry/query-definition.ts';
import type { Authorize, Session } from '../session/session.ts';
import type { EdgeStore } from '../store/edge-store.ts';
import type { StudioRule } from '../studio/studio-rule.ts';
import { requireTtl } from '../tokens/parse-ttl.ts';
import type { SigningKey } from '../tokens/signing-keys.ts';

/** The element's bundle: its text or bytes, or a loader called per bundle request (it may cache). */
export type BundleSource =
  | string
  | Uint8Array
  | (() =>
      | string
      | Uint8Array
      | null
      | undefined
      | Promise<string | Uint8Array | null | undefined>);

/** Lifetimes and limits of signed ids. Lifetimes are `10m`, `30d`… or seconds. */
export interface IdSettings {
  /** Default lifetime of session-bound ids. @default '10m' */
  sessionTtl?: string | number;
  /** Longest lifetime a session-bound id may be given. @default '1h' */
  maxSessionTtl?: string | number;
  /** Default lifetime of public ids. @default '30d' */
  publicTtl?: string | number;
  /** How long after expiry a session-bound id may still be renewed. @default '24h' */
  renewGrace?: string | number;
  /** Verified ids remembered until they expire, so cached data requests skip the HMAC. @default 10000 */
  verifiedCacheSize?: number;
  /** Accept ids that carry their definition (`d`), as the CLI can mint. @default true */
  inlineDefinitions?: boolean;
  /** Tolerated clock difference for `nbf`/`iat`, in seconds. @default 30 */
  clockSkewSeconds?: number;
  /** Longest id accepted, in characters. @default 8192 */
  maxLength?: number;
}

/** The result cache. */
export interface CacheSettings {
  /** How long an answer stays fresh. @default '60s' */
  ttl?: string | number;
  /** How long after that a stale answer may stand in when the backend fails. @default '10m' */
  staleIfError?: string | number;
  /** Resolved queries kept. @default 1000 */
  maxEntries?: number;
}

/** Token-bucket limits; `false` turns one off. */
export interface RateLimitSettings {
  /**
   * Per signed id (its jti): one bucket for a session-bound id, one per client address for a
   * public id (a public embed has many viewers). @default { perSecond: 5, burst: 30 }
   */
  perId?: RateRule | false;
  /** Per client address, on every API route. @default { perSecond: 50, burst: 200 } */
  perIp?: RateRule | false;
  /** Where buckets live. @default the `store`'s buckets */
  store?: RateLimitStore;
}

/**
 * Everything an edge needs, as one typed object. Secrets (signing keys, the key inside the
 * backend) come from the environment: see `edgeConfigFromEnv`.
 */
export interface EdgeConfig {
  /** Current key first, then previous ones; or the `EDGE_SIGNING_KEYS` string. */
  signingKeys: readonly SigningKey[] | string;
  /** Where queries run: `httpBackend(...)` or `engineBackend(...)`. */
  backend: Backend;
  /** The query registry: names to definitions. */
  queries: Readonly<Record<string, QueryDefinition>>;
  /** The session hook. Without one, sign/renew always answer 401 and only public ids work. */
  authorize?: Authorize;
  /**
   * Origins (e.g. `https://app.example.com`) whose pages may call the API from the browser with
   * credentials. `'*'` additionally lets any origin fetch data without credentials (public
   * embeds on CMS pages). Same-origin use needs nothing here.
   */
  allowedOrigins?: readonly string[];
  ids?: IdSettings;
  cache?: CacheSettings;
  rateLimit?: RateLimitSettings;
  /**
   * The edge's state: revoked ids, the registry of minted ids, rate-limit buckets. Several
   * replicas share one `redisStore` (`@analytics-chart/edge/redis`). @default memoryStore()
   */
  store?: EdgeStore;
  /**
   * Which signed-in sessions may use the admin API over issued ids (`/api/admin/ids`). Without
   * it, nobody may.
   */
  admin?: (session: Session) => boolean | Promise<boolean>;
  /**
   * The embed studio at `<base>/studio`, where the sessions this rule admits publish charts as
   * public ids, copy their snippets, and list and revoke their own. Needs `authorize` and
   * `publicUrl`. Without it the studio's routes answer 404.
   */
  studio?: StudioRule;
  /** Revoked ids by `jti`; `edge.revoke(jti)` adds more at run time. */
  revokedIds?: Iterable<string>;
  /**
   * A shared revocation check (KV, database), consulted on every data request. If it throws, the
   * request fails with a 502 and `revocation.check_failed` is logged.
   */
  isRevoked?: (jti: string) => boolean | Promise<boolean>;
  /** The element's bundle, served at `analytics-chart.js` and a content-hashed name. */
  bundle?: BundleSource;
  /** The client address for per-IP limits. Default: the socket address on Node, `cf-connecting-ip` on Workers. */
  clientIp?: (c: Context) => string | undefined;
  /** Where operator logs go. @default JSON lines on the console */
  log?: LogSink;
  /** Largest request body of sign and renew, in bytes. @default 16384 */
  maxBodyBytes?: number;
  /**
   * Where viewers reach the edge, mount path included (`https://app.example.com/analytics`): the
   * address oEmbed answers and the embed page's discovery link name. It comes from here, never
   * from a request's `Host`. Without it the embed page still works and the oEmbed endpoint
   * answers 404. `EDGE_PUBLIC_URL` in the environment.
   */
  publicUrl?: string;
}

/** The settings with defaults applied and lifetimes in seconds. */
export interface EdgeSettings {
  sessionTtl: number;
  maxSessionTtl: number;
  publicTtl: number;
  renewGrace: number;
  verifiedCacheSize: number;
  inlineDefinitions: boolean;
  clockSkewSeconds: number;
  maxIdLength: number;
  cacheTtl: number;
  staleIfError: number;
  cacheEntries: number;
  perId: RateRule | false;
  perIp: RateRule | false;
  maxBodyBytes: number;
  /** `publicUrl` without a trailing slash, or undefined. */
  publicUrl: string | undefined;
}

function checkRule(rule: RateRule | false | undefined, fallback: RateRule, name: string) {
  if (rule === false) return false;
  const r = rule ?? fallback;
  if (!(r.perSecond > 0) || !(r.burst >= 1)) {
    throw new Error(`rateLimit.${name}: perSecond must be > 0 and burst >= 1`);
  }
  return r;
}

function checkPublicUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.search || url.hash || url.username) {
    throw new Error(
      `publicUrl: '${value}' is not an http(s) address such as https://app.example.com/analytics`,
    );
  }
  return url.href.replace(/\/+$/, '');
}

/** Applies defaults and checks every setting, naming the first one that is wrong. */
export function resolveSettings(config: EdgeConfig): EdgeSettings {
  const ids = config.ids ?? {};
  const cache = config.cache ?? {};
  const settings: EdgeSettings = {
    sessionTtl: requireTtl(ids.sessionTtl ?? '10m', 'ids.sessionTtl'),
    maxSessionTtl: requireTtl(ids.maxSessionTtl ?? '1h', 'ids.maxSessionTtl'),
    publicTtl: requireTtl(ids.publicTtl ?? '30d', 'ids.publicTtl'),
    renewGrace: requireTtl(ids.renewGrace ?? '24h', 'ids.renewGrace'),
    verifiedCacheSize: ids.verifiedCacheSize ?? 10_000,
    inlineDefinitions: ids.inlineDefinitions ?? true,
    clockSkewSeconds: ids.clockSkewSeconds ?? 30,
    maxIdLength: ids.maxLength ?? 8192,
    cacheTtl: cache.ttl === 0 ? 0 : requireTtl(cache.ttl ?? '60s', 'cache.ttl'),
    staleIfError:
      cache.staleIfError === 0 ? 0 : requireTtl(cache.staleIfError ?? '10m', 'cache.staleIfError'),
    cacheEntries: cache.maxEntries ?? 1000,
    perId: checkRule(config.rateLimit?.perId, { perSecond: 5, burst: 30 }, 'perId'),
    perIp: checkRule(config.rateLimit?.perIp, { perSecond: 50, burst: 200 }, 'perIp'),
    maxBodyBytes: config.maxBodyBytes ?? 16_384,
    publicUrl: checkPublicUrl(config.publicUrl),
  };
  if (settings.sessionTtl > settings.maxSessionTtl) {
    throw new Error('ids.sessionTtl is longer than ids.maxSessionTtl');
  }
  return settings;
}
