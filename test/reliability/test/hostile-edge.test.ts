/**
 * Item 4 (edge): property-based fuzzing of the edge process (in front of the real engine
 * process) over raw sockets: `GET /api/data` with hostile Authorization values (mutated valid
 * ids, raw latin1 bytes), query strings and cookies; `POST /api/sign` and `POST /api/renew` with
 * mutated bodies, content types and sessions; raw bytes. Every refusal is a 4xx `{error, code}`
 * with the security headers; a 2xx only for input that deserves it, and a minted id always
 * carries the session's subject and tenant, whatever the body said.
 */
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ServerProcess } from '../src/child-process.ts';
import { reportFigures } from '../src/figures.ts';
import { forgeJwt, publicId, sessionCookie, sessionId } from '../src/forge-jwt.ts';
import { FuzzLedger, LEDGER_HEADER } from '../src/fuzz-ledger.ts';
import {
  deeplyNested,
  type Hostile,
  hostileBytes,
  hostileString,
  hostileValue,
  mutatedBody,
  toJsonText,
} from '../src/hostile-values.ts';
import { budget } from '../src/profile.ts';
import { type RawRequest, type RawResponse, rawRequest } from '../src/raw-http.ts';
import {
  type EdgeSecrets,
  type EngineUnderTest,
  newEdgeSecrets,
  startEdge,
  startSeededEngine,
} from '../src/system-under-test.ts';

const API_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
};
const USER = 'fuzz-user';
const TENANT = 'acme';
/** The viewer's ranges of the registry's queries (reliability-queries.ts). */
const RANGES: Record<string, readonly string[]> = {
  'public-daily': ['24h', '7d', '30d'],
  'public-count': [],
  daily: ['24h', '7d', '30d'],
};

let engine: EngineUnderTest;
let edge: ServerProcess;
let secrets: EdgeSecrets;
const secretList: string[] = [];
const ledger = new FuzzLedger(
  () => edge.url,
  { withCode: true, secrets: secretList, headers: API_HEADERS },
  [],
);

/** Valid ids and cookies, made once the secrets exist. */
const valid = {
  publicDaily: '',
  publicCount: '',
  session: '',
  /** Expired an hour ago, inside the renewal grace. */
  expiredSession: '',
  otherUsersSession: '',
  cookie: '',
  otherCookie: '',
};
/** Each valid id and the query it names. */
const idQuery = new Map<string, { q: string; sub?: string }>();

beforeAll(async () => {
  engine = await startSeededEngine(500);
  secrets = newEdgeSecrets();
  secretList.push(secrets.key.secret, secrets.sessionSecret, engine.apiKey);
  // Limits off: thousands of cases from one address would otherwise meet the (correct) 429.
  edge = await startEdge(secrets, engine, {
    settings: { rateLimit: { perId: false, perIp: false } },
  });
  const now = Math.floor(Date.now() / 1000);
  valid.publicDaily = publicId(secrets.key, 'public-daily', { tenant: TENANT });
  valid.publicCount = publicId(secrets.key, 'public-count', { tenant: 'globex' });
  valid.session = sessionId(secrets.key, 'daily', USER, { tenant: TENANT });
  valid.expiredSession = sessionId(
    secrets.key,
    'daily',
    USER,
    { tenant: TENANT },
    { iat: now - 4200, exp: now - 3600 },
  );
  valid.otherUsersSession = sessionId(secrets.key, 'daily', 'someone-else', { tenant: 'globex' });
  valid.cookie = sessionCookie(secrets.sessionSecret, USER, TENANT);
  valid.otherCookie = sessionCookie(secrets.sessionSecret, 'someone-else', 'globex');
  idQuery.set(valid.publicDaily, { q: 'public-daily' });
  idQuery.set(valid.publicCount, { q: 'public-count' });
  idQuery.set(valid.session, { q: 'daily', sub: USER });
  idQuery.set(valid.otherUsersSession, { q: 'daily', sub: 'someone-else' });
});

afterAll(async () => {
  reportFigures(
    'hostile-edge',
    `Hostile input: edge process (${budget().fuzzRuns} runs per property; total ${ledger.total()} cases)`,
    LEDGER_HEADER,
    ledger.rows(),
    { findings: Object.fromEntries(ledger.findings) },
  );
  await edge?.stop();
  await engine?.close();
});

/** Decodes and checks an id the edge minted, with an HMAC computed here. */
function mintedClaims(id: unknown): Record<string, unknown> | string {
  if (typeof id !== 'string') return 'no id';
  const [h = '', p = '', s = ''] = id.split('.');
  const expected = createHmac('sha256', secrets.key.secret).update(`${h}.${p}`).digest('base64url');
  if (s !== expected) return 'minted id does not verify with the signing key';
  return JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>;
}

const SAFE_HEADER_BYTE = (b: number) => b === 0x09 || (b >= 0x20 && b <= 0x7e);

/** What the server's header parser and Hono make of an Authorization value. */
function bearerToken(value: Buffer | undefined): string | undefined {
  if (value === undefined) return undefined;
  const text = value.toString('latin1').replace(/^[\t ]+|[\t ]+$/g, '');
  if (text.slice(0, 7).toLowerCase() !== 'bearer ') return undefined;
  return text.slice(7).trim();
}

/** Whether a data request deserves a 200: a valid id, its session, and only an allowed range. */
function dataDeserves(path: string, auth: Buffer | undefined, cookie: string | undefined): boolean {
  const token = bearerToken(auth);
  const id = token === undefined ? undefined : idQuery.get(token);
  if (!id) return false;
  if (id.sub !== undefined) {
    const expected = id.sub === USER ? valid.cookie : valid.otherCookie;
    if (cookie !== expected) return false;
  }
  // A fragment is no part of an HTTP request target (browsers never send one): not a chart.
  if (path.includes('#')) return false;
  const search = new URL(path, 'http://edge.test').search;
  const entries = [...new URLSearchParams(search.slice(1))];
  if (entries.length === 0) return true;
  if (entries.length > 1 || entries[0]?.[0] !== 'range') return false;
  return (RANGES[id.q] ?? []).includes(entries[0][1]);
}

/** Mutations of a valid id, as string operations. */
const mutatedId: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom('publicDaily', 'publicCount', 'session', 'expiredSession', 'otherUsersSession'),
    fc.nat(),
    fc.constantFrom(
      'keep',
      'keep',
      'keep',
      'flip',
      'truncate',
      'drop-signature',
      'pad',
      'whitespace',
      'case',
      'swap-payload',
      'extra-segment',
      'insert',
    ),
    fc.string({ maxLength: 6 }),
  )
  .map(([name, at, how, extra]) => {
    const id = valid[name as keyof typeof valid];
    const i = at % Math.max(1, id.length);
    const [h = '', p = '', s = ''] = id.split('.');
    switch (how) {
      case 'flip': {
        const c = id[i] === 'A' ? 'B' : 'A';
        return `${id.slice(0, i)}${c}${id.slice(i + 1)}`;
      }
      case 'truncate':
        return id.slice(0, i);
      case 'drop-signature':
        return `${h}.${p}.`;
      case 'pad':
        return `${h}==.${p}=.${s}=`;
      case 'whitespace':
        return `${id.slice(0, i)} ${id.slice(i)}`;
      case 'case':
        return id.toUpperCase();
      case 'swap-payload':
        return `${h}.${valid.publicCount.split('.')[1]}.${s}`;
      case 'extra-segment':
        return `${id}.${s}`;
      case 'insert':
        return `${id.slice(0, i)}${extra}${id.slice(i)}`;
      default:
        return id;
    }
  });

/** Authorization header bytes: bearer prefixes around mutated ids, or anything latin1. */
const authorization: fc.Arbitrary<Buffer | undefined> = fc.oneof(
  {
    arbitrary: fc
      .constantFrom('publicDaily', 'publicCount', 'session', 'otherUsersSession')
      .map((name) => Buffer.from(`Bearer ${valid[name as keyof typeof valid]}`)),
    weight: 3,
  },
  {
    arbitrary: fc
      .tuple(
        fc.constantFrom(
          'Bearer ',
          'bearer ',
          'BEARER ',
          'Bearer  ',
          'Bearer\t',
          'Basic ',
          'Bearer',
          '',
        ),
        mutatedId,
        fc.constantFrom('', ' ', '\t'),
      )
      .map(([prefix, id, suffix]) => Buffer.from(`${prefix}${id}${suffix}`, 'latin1')),
    weight: 5,
  },
  {
    arbitrary: fc
      .uint8Array({ maxLength: 120 })
      .map((b) => Buffer.from(b.filter((x) => x >= 0x20 || x === 0x09))),
    weight: 2,
  },
  {
    arbitrary: hostileString.map((s) => Buffer.from(`Bearer ${s}`, 'utf8').subarray(0, 9000)),
    weight: 2,
  },
  { arbitrary: fc.constant(undefined), weight: 1 },
);

/** Percent-encodes a string's UTF-8 bytes (lone surrogates become U+FFFD, as a browser sends). */
const percent = (text: string) =>
  [...Buffer.from(text, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).padStart(2, '0')}`,
    )
    .join('');

/** A query string: nothing, an allowed or hostile range, other options, raw escapes. */
const queryString: fc.Arbitrary<string> = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      '',
      '?',
      '?range=7d',
      '?range=24h',
      '?range=30d',
      '?&',
      '?range=7d&',
      '?%72ange=7d',
      '?range=7d&range=30d',
      '?range=7d#x',
      '?range=%ff%fe',
      '?range',
      '?range=',
      '?__proto__=1',
      '?constructor=x&range=7d',
    ),
    weight: 3,
  },
  {
    arbitrary: fc
      .array(fc.tuple(fc.oneof(fc.constant('range'), hostileString), hostileString), {
        maxLength: 3,
      })
      // Values cut to 2,000 characters so most reach the edge (Node refuses a head over 16 KB).
      .map((pairs) =>
        pairs.length
          ? `?${pairs.map(([k, v]) => `${percent(k.slice(0, 2000))}=${percent(v.slice(0, 2000))}`).join('&')}`
          : '',
      ),
    weight: 2,
  },
);

const cookieChoice: fc.Arbitrary<string | undefined> = fc
  .constantFrom<'none' | 'mine' | 'other' | 'garbage'>('none', 'mine', 'mine', 'other', 'garbage')
  .map((c) =>
    c === 'mine'
      ? valid.cookie
      : c === 'other'
        ? valid.otherCookie
        : c === 'garbage'
          ? 'session=eyJ.x.y; other=1'
          : undefined,
  );

function dataRequest(
  path: string,
  auth: Buffer | undefined,
  cookie: string | undefined,
): RawRequest {
  const headers: Array<[string, string | Buffer]> = [];
  if (auth !== undefined) headers.push(['Authorization', auth]);
  if (cookie !== undefined) headers.push(['Cookie', cookie]);
  return { method: 'GET', path, headers };
}

async function fuzzData(path: string, auth: Buffer | undefined, cookie: string | undefined) {
  const deserves = dataDeserves(path, auth, cookie);
  await ledger.send('GET /api/data', dataRequest(path, auth, cookie), {
    // Node's parser refuses some byte values in header values, and heads over 16 KB, itself
    // (counted apart).
    parserMayRefuse:
      (auth !== undefined && !auth.every(SAFE_HEADER_BYTE)) ||
      path.length + (auth?.length ?? 0) + (cookie?.length ?? 0) > 15_000,
    judge: (answer) =>
      deserves === (answer.status === 200)
        ? []
        : [`${answer.status} but the request ${deserves ? 'deserves' : 'does not deserve'} a 200`],
  });
}

const SIGN_TEMPLATES = [
  { query: 'daily' },
  { query: 'daily', range: '24h', ttl: '5m' },
  { query: 'by-tag', ttl: 120 },
  { query: 'public-count', params: { tenant: 'acme' } },
];

/** The sign route's promise: a minted id names the asked query for the session's user and tenant. */
function signJudge(body: Buffer, cookie: string | undefined, contentType: string) {
  return (answer: RawResponse): string[] => {
    const signedIn = cookie === valid.cookie || cookie === valid.otherCookie;
    if (!signedIn) {
      // The body limit runs before the session check: an oversized body is 413 either way.
      const expected = body.length > 16_384 ? 413 : 401;
      return answer.status === expected
        ? []
        : [`${answer.status} without a session (expected ${expected})`];
    }
    if (answer.status !== 200) return [];
    if (!/^application\/json/i.test(contentType))
      return ['2xx for a body that is not declared JSON'];
    const sent = JSON.parse(body.toString('utf8')) as { query?: unknown };
    const claims = mintedClaims((JSON.parse(answer.text) as { id?: unknown }).id);
    if (typeof claims === 'string') return [claims];
    const [sub, tenant] = cookie === valid.cookie ? [USER, TENANT] : ['someone-else', 'globex'];
    const problems: string[] = [];
    if (claims.sub !== sub)
      problems.push(`minted for ${String(claims.sub)}, not the session's ${sub}`);
    if (claims.q !== sent.query)
      problems.push(`minted for query ${String(claims.q)}, not ${String(sent.query)}`);
    if (claims.pub !== undefined) problems.push('a signed-in viewer minted a public id');
    const p = claims.p as Record<string, unknown> | undefined;
    if (claims.q !== 'public-count' && p?.tenant !== tenant) {
      problems.push(`tenant ${String(p?.tenant)} in the id, the session's is ${tenant}`);
    }
    return problems;
  };
}

/** The renew route's promise: only a valid session id of this viewer is renewed, unchanged. */
function renewJudge(body: Buffer, cookie: string | undefined, contentType: string) {
  return (answer: RawResponse): string[] => {
    let sent: unknown;
    try {
      sent = JSON.parse(body.toString('utf8'));
    } catch {
      sent = undefined;
    }
    const object =
      typeof sent === 'object' && sent !== null && !Array.isArray(sent)
        ? (sent as Record<string, unknown>)
        : undefined;
    const id = object?.id;
    // The viewer's own session ids (current or recently expired), with that viewer's session.
    const own =
      (cookie === valid.cookie && (id === valid.session || id === valid.expiredSession)) ||
      (cookie === valid.otherCookie && id === valid.otherUsersSession);
    const deserves =
      own &&
      /^application\/json/i.test(contentType) &&
      object !== undefined &&
      Object.keys(object).join() === 'id';
    if (deserves !== (answer.status === 200)) {
      return [
        `${answer.status} but the request ${deserves ? 'deserves' : 'does not deserve'} a renewal`,
      ];
    }
    if (answer.status !== 200) return [];
    const claims = mintedClaims((JSON.parse(answer.text) as { id?: unknown }).id);
    if (typeof claims === 'string') return [claims];
    const p = claims.p as Record<string, unknown> | undefined;
    const [sub, tenant] = cookie === valid.cookie ? [USER, TENANT] : ['someone-else', 'globex'];
    return claims.sub === sub && claims.q === 'daily' && p?.tenant === tenant
      ? []
      : ['renewed id changed its claims'];
  };
}

const contentTypes = fc.constantFrom(
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'APPLICATION/JSON',
  '',
);

function postRequest(
  path: string,
  body: Buffer,
  contentType: string,
  cookie: string | undefined,
): RawRequest {
  const headers: Array<[string, string]> = [];
  if (contentType) headers.push(['Content-Type', contentType]);
  if (cookie !== undefined) headers.push(['Cookie', cookie]);
  return { method: 'POST', path, headers, body };
}

const runs = budget().fuzzRuns;

describe('properties', () => {
  test('GET /api/data: Authorization values, query strings and cookies', async () => {
    await fc.assert(
      fc.asyncProperty(queryString, authorization, cookieChoice, (query, auth, cookie) =>
        fuzzData(`/api/data${query}`, auth, cookie),
      ),
      { numRuns: runs },
    );
  });

  test('POST /api/sign: mutated bodies, content types and sessions', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          { arbitrary: fc.constantFrom(...SIGN_TEMPLATES).chain(mutatedBody), weight: 4 },
          { arbitrary: hostileValue, weight: 1 },
        ),
        contentTypes,
        cookieChoice,
        async (value, contentType, cookie) => {
          const body = Buffer.from(toJsonText(value));
          await ledger.send('POST /api/sign', postRequest('/api/sign', body, contentType, cookie), {
            judge: signJudge(body, cookie, contentType),
          });
        },
      ),
      { numRuns: runs },
    );
  });

  test('POST /api/renew: valid, expired, foreign, public and mutated ids', async () => {
    const idValue: fc.Arbitrary<Hostile> = fc.oneof(
      fc
        .constantFrom('session', 'expiredSession', 'otherUsersSession', 'publicDaily')
        .map((n) => valid[n as keyof typeof valid]),
      mutatedId,
      hostileValue,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          { arbitrary: idValue.map((id): Hostile => ({ obj: [['id', id]] })), weight: 3 },
          {
            arbitrary: idValue.chain((id) =>
              mutatedBody({ id: '@ID@' }).map(
                (b) =>
                  JSON.parse(
                    JSON.stringify(b).replace('"@ID@"', () => JSON.stringify(id)),
                  ) as Hostile,
              ),
            ),
            weight: 1,
          },
        ),
        contentTypes,
        cookieChoice,
        async (value, contentType, cookie) => {
          const body = Buffer.from(toJsonText(value));
          await ledger.send(
            'POST /api/renew',
            postRequest('/api/renew', body, contentType, cookie),
            {
              judge: renewJudge(body, cookie, contentType),
            },
          );
        },
      ),
      { numRuns: runs },
    );
  });

  test('POST /api/sign and /api/renew: raw bytes, invalid UTF-8', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/api/sign', '/api/renew'),
        hostileBytes,
        async (path, bytes) => {
          const answer = await ledger.send(
            `POST ${path}`,
            postRequest(path, bytes, 'application/json', valid.cookie),
          );
          expect(answer.status).not.toBe(200);
        },
      ),
      { numRuns: runs },
    );
  });
});

describe('fixed hostile cases', () => {
  test('ids at and past the length limit, headers past Node’s limit', async () => {
    await fuzzData('/api/data', Buffer.from(`Bearer ${'a'.repeat(8_193)}`), undefined);
    await fuzzData(
      '/api/data',
      Buffer.from(`Bearer ${valid.publicDaily}${'A'.repeat(8_192 - valid.publicDaily.length + 1)}`),
      undefined,
    );
    // 20 KB of header: Node's HTTP parser answers 431 before the edge sees the request.
    const answer = await ledger.send(
      'GET /api/data',
      dataRequest('/api/data', Buffer.from(`Bearer ${'a'.repeat(20_000)}`), undefined),
      { parserMayRefuse: true },
    );
    expect(answer.status).toBe(431);
  });

  test('bodies past 16 KB, deep nesting, prototype keys in sign and renew', async () => {
    const big = Buffer.from(JSON.stringify({ query: 'daily', ttl: 'x'.repeat(17_000) }));
    for (const path of ['/api/sign', '/api/renew']) {
      const answer = await ledger.send(
        `POST ${path}`,
        postRequest(path, big, 'application/json', valid.cookie),
      );
      expect(answer.status).toBe(413);
      for (const depth of [1_000, 100_000]) {
        const deep = Buffer.from(`{"query":"daily","params":${deeplyNested(depth, 'mixed')}}`);
        if (deep.length < 16_384) {
          const nested = await ledger.send(
            `POST ${path}`,
            postRequest(path, deep, 'application/json', valid.cookie),
          );
          expect(nested.status).toBe(400);
        }
      }
    }
    const polluting = [
      '{"query":"daily","params":{"tenant":"globex"}}',
      '{"query":"daily","params":{"__proto__":{"tenant":"globex"}}}',
      '{"query":"daily","__proto__":{"params":{"tenant":"globex"}}}',
      '{"query":"daily","constructor":{"prototype":{"tenant":"globex"}}}',
      '{"__proto__":{"query":"daily"}}',
      '{"query":"daily","query":"by-tag"}',
      '{"query":"daily","params":{"tenant":"acme","tenant":"globex"}}',
      '{"query":"__proto__"}',
      '{"query":"constructor"}',
      '{"query":"toString"}',
      '{"query":"public-count","params":{"tenant":"../../etc"}}',
      '{"query":"public-count","params":{"tenant":1e400}}',
      '{"query":"daily","ttl":1e400}',
      '{"query":"daily","ttl":"NaN"}',
      '{"query":"daily","ttl":-1}',
      '{"query":"daily","ttl":"99999d"}',
      `{"query":"daily","${'k'.repeat(1000)}":1}`,
      `{"query":"public-count","params":{"${'k'.repeat(1000)}":"acme"}}`,
    ];
    for (const text of polluting) {
      const body = Buffer.from(text);
      await ledger.send(
        'POST /api/sign',
        postRequest('/api/sign', body, 'application/json', valid.cookie),
        {
          judge: signJudge(body, valid.cookie, 'application/json'),
        },
      );
    }
    const renewals = [
      `{"id":${JSON.stringify(valid.session)},"__proto__":{"sub":"someone-else"}}`,
      `{"__proto__":{"id":${JSON.stringify(valid.session)}}}`,
      `{"id":[${JSON.stringify(valid.session)}]}`,
      `{"id":{"toString":${JSON.stringify(valid.session)}}}`,
      `{"id":${JSON.stringify(forgeJwt({ alg: 'HS256', kid: secrets.key.kid }, { q: 'daily', sub: USER, p: { tenant: TENANT }, iat: 1, exp: 2, jti: 'old' }, secrets.key.secret))}}`,
    ];
    for (const text of renewals) {
      const body = Buffer.from(text);
      await ledger.send(
        'POST /api/renew',
        postRequest('/api/renew', body, 'application/json', valid.cookie),
        {
          judge: renewJudge(body, valid.cookie, 'application/json'),
        },
      );
    }
  });

  test('other routes: JSON 404s; other methods: 405s; both with the security headers', async () => {
    for (const [method, path, status] of [
      ['GET', '/api/sign', 405],
      ['PUT', '/api/data', 405],
      ['GET', '/%ff%fe', 404],
      ['GET', '/api/../../etc/passwd', 404],
      ['DELETE', '/api/renew', 405],
      ['GET', '/analytics-chart.0123456789abcdef.js', 404],
    ] as const) {
      const answer = await ledger.send(`${method} (other routes)`, { method, path });
      expect(answer.status, `${method} ${path}`).toBe(status);
    }
  });
});

test('after everything: still up, no pollution, sessions and tenants still enforced', async () => {
  const health = await rawRequest(edge.url, { method: 'GET', path: '/health' });
  expect(health.status).toBe(200);
  expect(edge.child.exitCode).toBeNull();
  // A signed-in viewer still gets ids for their own tenant only.
  const body = Buffer.from('{"query":"daily"}');
  const sign = await rawRequest(
    edge.url,
    postRequest('/api/sign', body, 'application/json', valid.cookie),
  );
  expect(sign.status).toBe(200);
  expect(mintedClaims(JSON.parse(sign.text).id)).toMatchObject({
    sub: USER,
    p: { tenant: TENANT },
    q: 'daily',
  });
  // A session-bound id still needs its own session.
  const auth = Buffer.from(`Bearer ${valid.session}`);
  expect((await rawRequest(edge.url, dataRequest('/api/data', auth, undefined))).status).toBe(401);
  expect(
    (await rawRequest(edge.url, dataRequest('/api/data', auth, valid.otherCookie))).status,
  ).toBe(403);
  expect((await rawRequest(edge.url, dataRequest('/api/data', auth, valid.cookie))).status).toBe(
    200,
  );
  for (const secret of secretList) expect(edge.output()).not.toContain(secret);
});
