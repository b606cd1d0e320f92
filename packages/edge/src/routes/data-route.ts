import { isSqlQuery, resolveWindows } from '@analytics-chart/protocol';
import type { Context } from 'hono';
import { BackendError } from '../backend/backend.ts';
import {
  currentSession,
  type EdgeRuntime,
  isRevokedNow,
  limit,
  limitIp,
  publicIdBucket,
  sessionMismatch,
} from '../edge-runtime.ts';
import { EdgeError } from '../http/edge-error.ts';
import { entityTag } from '../http/entity-tag.ts';
import { etagMatches } from '../http/respond.ts';
import { API_SECURITY_HEADERS } from '../http/security-headers.ts';
import { fingerprint } from '../log/logger.ts';
import { toChartPayload, wholeSecondWindow } from '../payload/to-chart-payload.ts';
import type { DataCors } from '../protection/data-cors.ts';
import { Lru } from '../protection/lru.ts';
import {
  type CachedResult,
  type LoadedResult,
  type PreparedBody,
  ResultCache,
} from '../protection/result-cache.ts';
import { type CompiledDefinition, compileDefinition } from '../registry/compile-definition.ts';
import { type ResolvedQuery, resolveQuery } from '../registry/resolve-query.ts';
import { signerRefusal } from '../registry/signer-rules.ts';
import type { QueryIdClaims } from '../tokens/query-id-claims.ts';
import { verifyQueryId } from '../tokens/verify-query-id.ts';

/** A verified id remembered until its expiry, with its definition and resolved queries. */
interface VerifiedEntry {
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

/** A ready body with the headers of its 200 and 304 answers, built once per cached result. */
interface ReadyBody extends PreparedBody {
  headers: Readonly<Record<string, string>>;
  staleHeaders: Readonly<Record<string, string>>;
}

const INVALID = 'The query id is not valid.';
const encoder = new TextEncoder();

function headersFor(etag: string): ReadyBody['headers'] {
  return Object.freeze({
    ...API_SECURITY_HEADERS,
    'Content-Type': 'application/json; charset=utf-8',
    // The browser may keep a copy but must revalidate each time, so an expired or revoked id
    // stops working at once while an unchanged result costs only a 304. No `Vary: Authorization`
    // is needed: the ETag is the content's hash, so a 304 is right whichever id asked.
    'Cache-Control': 'private, no-cache',
    ETag: etag,
  });
}

/**
 * The data route: verify the id, check revocation, limits, audience and session, resolve the
 * query, answer from the cache or the backend, trimmed to the chart payload. The common case (a
 * remembered id, a fresh cached result, in-memory limits) runs synchronously: no HMAC, no await.
 * With `cors`, its answers carry the CORS headers for the request's origin.
 */
export function dataRoute(runtime: EdgeRuntime, cors?: DataCors) {
  const { settings, logger, keyring, registry } = runtime;
  const verified = new Lru<string, VerifiedEntry>(settings.verifiedCacheSize);
  const cache = new ResultCache(settings.cacheEntries);

  function deny(
    code: 'invalid' | 'expired' | 'forbidden',
    message: string,
    tag: string,
    reason: string,
    status?: number,
  ): never {
    logger.log({
      level: code === 'expired' ? 'info' : 'warn',
      event: 'data.denied',
      message: reason,
      code,
      id: tag,
    });
    throw new EdgeError(code, message, status === undefined ? {} : { status });
  }

  /** The remembered entry when there is one: only the HMAC is skipped, every check still runs. */
  function remembered(token: string, now: number): VerifiedEntry | undefined {
    const hit = verified.get(token);
    if (!hit) return undefined;
    if (hit.claims.exp <= now) {
      verified.delete(token);
      deny('expired', 'The query id has expired.', hit.tag, 'expired');
    }
    if (!keyring.has(hit.kid)) {
      verified.delete(token);
      deny('invalid', INVALID, hit.tag, `key ${hit.kid} was removed`);
    }
    return hit;
  }

  /** Full verification of an id not remembered yet; fills the memory. */
  async function verifyFresh(token: string, now: number): Promise<VerifiedEntry> {
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
    const entry: VerifiedEntry = {
      claims,
      kid,
      compiled,
      resolved: new Map(),
      audience: claims.aud === undefined ? undefined : [claims.aud].flat(),
      bucket: `id:${claims.jti}`,
      buckets: claims.pub === true ? new Map() : undefined,
      tag: claims.jti,
    };
    verified.set(token, entry);
    return entry;
  }

  /** The viewer's range choice from the query string, checked against the definition. */
  function viewerRange(c: Context, compiled: CompiledDefinition): string | undefined {
    const url = c.req.url;
    const q = url.indexOf('?');
    if (q < 0 || q === url.length - 1) return undefined;
    const search = new URLSearchParams(url.slice(q + 1));
    let range: string | undefined;
    for (const [key, value] of search) {
      if (key !== 'range') {
        throw new EdgeError(
          'bad_request',
          `Unknown viewer option '${key.slice(0, 40)}'; charts accept range.`,
        );
      }
      if (range !== undefined) throw new EdgeError('bad_request', 'Give range once.');
      range = value;
    }
    if (range === undefined) return undefined;
    if (!compiled.rangeKeys.includes(range)) {
      throw new EdgeError(
        'bad_request',
        compiled.rangeKeys.length
          ? `range '${range.slice(0, 40)}' is not allowed for this chart; choose one of ${compiled.rangeKeys.join(', ')}.`
          : 'This chart has no ranges to choose from.',
      );
    }
    return range;
  }

  async function load(resolved: ResolvedQuery): Promise<LoadedResult> {
    const envelope = await runtime.backend.query(resolved.body);
    let window: LoadedResult['window'];
    if (!isSqlQuery(resolved.parsed)) {
      const windows = resolveWindows(resolved.parsed, Date.now() / 1000);
      if (windows.ok) {
        window = wholeSecondWindow(windows.value.window);
      }
    }
    return { envelope, window };
  }

  /** The trimmed body of a cached result for this definition, built once per result. */
  function prepare(
    entry: CachedResult,
    resolved: ResolvedQuery,
    compiled: CompiledDefinition,
  ): ReadyBody {
    const existing = entry.bodies.get(compiled.trimKey);
    if (existing) return existing as ReadyBody;
    const payload = toChartPayload(entry.envelope, resolved.parsed, compiled.definition, {
      window: entry.window,
      generatedAt: new Date(entry.fetchedAt).toISOString(),
      expiresAt: new Date(entry.freshUntil).toISOString(),
    });
    const bytes = encoder.encode(JSON.stringify(payload));
    const etag = entityTag(bytes);
    const headers = headersFor(etag);
    const body: ReadyBody = {
      bytes,
      etag,
      headers,
      staleHeaders: Object.freeze({ ...headers, 'X-Analytics-Stale': 'true' }),
    };
    entry.bodies.set(compiled.trimKey, body);
    return body;
  }

  function backendFailure(error: unknown, tag: string): EdgeError {
    if (!(error instanceof BackendError)) {
      logger.log({
        level: 'error',
        event: 'backend.bug',
        message: logger.scrub(String((error as Error)?.message ?? error)),
        id: tag,
      });
      return new EdgeError('backend', 'The analytics service could not answer.');
    }
    switch (error.kind) {
      case 'key_rejected':
        logger.log({
          level: 'error',
          event: 'backend.key_rejected',
          message:
            'CONFIGURATION ERROR: the analytics service answered "Invalid API KEY". Check the deployed ANALYTICS_API_KEY: was the key replaced, or does it carry stray whitespace? Not retried.',
          id: tag,
        });
        return new EdgeError(
          'backend',
          'The chart service is misconfigured; the site owner has been told.',
        );
      case 'timeout':
        logger.log({
          level: 'warn',
          event: 'backend.timeout',
          message: logger.scrub(error.message),
          id: tag,
        });
        return new EdgeError('timeout', 'The analytics service did not answer in time.');
      default:
        logger.log({
          level: 'error',
          event: `backend.${error.kind}`,
          message: logger.scrub(error.message),
          status: error.status,
          id: tag,
        });
        return new EdgeError(
          'backend',
          error.kind === 'refused'
            ? 'The analytics service could not run this query.'
            : 'The analytics service is unavailable.',
        );
    }
  }

  function send(c: Context, body: ReadyBody, stale: boolean): Response {
    const ready = stale ? body.staleHeaders : body.headers;
    const headers = cors ? { ...ready, ...cors.headersFor(c.req.header('origin')) } : ready;
    const inm = c.req.header('if-none-match');
    if (inm && etagMatches(inm, body.etag)) return new Response(null, { status: 304, headers });
    return new Response(body.bytes, { status: 200, headers });
  }

  /** Answers from the cache, or loads (one shared backend call per resolved query). */
  function respond(c: Context, entry: VerifiedEntry): Response | Promise<Response> {
    const { claims, compiled } = entry;
    const chosen = viewerRange(c, compiled);
    const signed =
      claims.r !== undefined && compiled.rangeKeys.includes(claims.r) ? claims.r : undefined;
    const rangeKey = chosen ?? signed ?? compiled.defaultRange;
    let resolved = entry.resolved.get(rangeKey ?? '');
    if (!resolved) {
      const outcome = resolveQuery(compiled, claims.p ?? {}, rangeKey);
      if (!outcome.ok) {
        deny(
          'invalid',
          'The query id no longer fits its query; ask for a new one.',
          entry.tag,
          outcome.error,
        );
      }
      resolved = outcome.value;
      entry.resolved.set(rangeKey ?? '', resolved);
    }
    const fresh = cache.peek(resolved.cacheKey);
    if (fresh) return send(c, prepare(fresh, resolved, compiled), false);
    return loadAndSend(c, entry, resolved);
  }

  async function loadAndSend(
    c: Context,
    entry: VerifiedEntry,
    resolved: ResolvedQuery,
  ): Promise<Response> {
    const { compiled } = entry;
    const ttl = (compiled.definition.cacheSeconds ?? settings.cacheTtl) * 1000;
    let outcome: Awaited<ReturnType<ResultCache['get']>>;
    try {
      outcome = await cache.get(resolved.cacheKey, ttl, settings.staleIfError * 1000, () =>
        load(resolved),
      );
    } catch (error) {
      throw backendFailure(error, entry.tag);
    }
    if (outcome.stale) {
      backendFailure(outcome.error, entry.tag);
      logger.log({
        level: 'warn',
        event: 'data.stale',
        message: 'served a stale result because the backend failed',
        id: entry.tag,
      });
    }
    return send(c, prepare(outcome.entry, resolved, compiled), outcome.stale);
  }

  /** Session-bound ids: the current session must be the one the id was issued to. */
  async function checkSession(c: Context, entry: VerifiedEntry): Promise<void> {
    const { claims, compiled } = entry;
    c.set('analyticsBearerIsQueryId', true);
    const session = await currentSession(runtime, c);
    if (!session) deny('forbidden', 'Sign in to see this chart.', entry.tag, 'no session', 401);
    if (session.subject !== claims.sub) {
      deny('forbidden', 'This chart was issued to someone else.', entry.tag, 'subject differs');
    }
    const mismatch =
      sessionMismatch(session, claims.p, compiled) ??
      (await signerRefusal(compiled, session, false));
    if (mismatch) deny('forbidden', 'This chart belongs to another account.', entry.tag, mismatch);
  }

  function afterLimits(c: Context, entry: VerifiedEntry): Response | Promise<Response> {
    if (entry.audience) {
      const origin = c.req.header('origin');
      if (origin && !entry.audience.includes(origin)) {
        deny(
          'forbidden',
          'This chart may not be shown on this site.',
          entry.tag,
          `origin ${origin.slice(0, 100)} not in aud`,
        );
      }
    }
    if (entry.claims.pub === true) return respond(c, entry);
    return checkSession(c, entry).then(() => respond(c, entry));
  }

  function withEntry(
    c: Context,
    entry: VerifiedEntry,
    nowMs: number,
  ): Response | Promise<Response> {
    const revoked = isRevokedNow(runtime, entry.claims.jti);
    if (revoked === false) return afterRevocation(c, entry, nowMs);
    if (revoked === true) deny('invalid', INVALID, entry.tag, 'revoked');
    return revoked.then((yes) => {
      if (yes) deny('invalid', INVALID, entry.tag, 'revoked');
      return afterRevocation(c, entry, nowMs);
    });
  }

  /**
   * The per-id bucket. A session-bound id has one user, so one bucket; a public id is shown to
   * many viewers (a CMS page), so each client address gets its own bucket for it.
   */
  function idBucket(c: Context, entry: VerifiedEntry): string {
    if (!entry.buckets) return entry.bucket;
    const ip = runtime.clientIp(c) ?? 'unknown';
    let key = entry.buckets.get(ip);
    if (key === undefined) {
      if (entry.buckets.size >= 1000) entry.buckets.clear();
      key = publicIdBucket(entry.claims.jti, ip);
      entry.buckets.set(ip, key);
    }
    return key;
  }

  function afterRevocation(
    c: Context,
    entry: VerifiedEntry,
    nowMs: number,
  ): Response | Promise<Response> {
    if (settings.perId === false) return afterLimits(c, entry);
    const wait = limit(runtime, idBucket(c, entry), settings.perId, nowMs);
    return wait ? waitThen(wait, c, entry) : afterLimits(c, entry);
  }

  async function waitThen(
    wait: Promise<void>,
    c: Context,
    entry: VerifiedEntry,
  ): Promise<Response> {
    await wait;
    return afterLimits(c, entry);
  }

  function afterIp(c: Context, nowMs: number): Response | Promise<Response> {
    const now = Math.floor(nowMs / 1000);
    const auth = c.req.header('authorization');
    if (auth?.slice(0, 7).toLowerCase() !== 'bearer ') {
      throw new EdgeError('invalid', 'Send the query id as Authorization: Bearer <id>.');
    }
    const token = auth.slice(7).trim();
    if (token.length > settings.maxIdLength) {
      deny('invalid', 'The query id is too long.', fingerprint(token), 'too long');
    }
    const hit = remembered(token, now);
    if (hit) return withEntry(c, hit, nowMs);
    return verifyFresh(token, now).then((entry) => withEntry(c, entry, nowMs));
  }

  /** `GET /api/data`. Throws (or rejects with) an {@link EdgeError} for every refusal. */
  function handle(c: Context): Response | Promise<Response> {
    const nowMs = Date.now();
    const wait = limitIp(runtime, c, nowMs);
    return wait ? wait.then(() => afterIp(c, nowMs)) : afterIp(c, nowMs);
  }

  return {
    handle,
    clear: () => {
      cache.clear();
      verified.clear();
    },
  };
}
