/**
 * Item 4 (edge): property-based fuzzing of the edge process (in front of the real engine
 * process) over raw sockets: `GET /api/data` with hostile Authorization values (mutated valid
 * ids, raw latin1 bytes), query strings and cookies; `POST /api/sign` and `POST /api/renew` with
 * mutated bodies, content types and sessions; raw bytes; the CMS embeds (`GET /embed/<id>` with
 * hostile ids and options, `GET /oembed` with hostile URLs and sizes); the embed studio's
 * `POST /api/studio/embeds` with mutated bodies, content types and sessions. Every refusal is a 4xx
 * `{error, code}` (the embed page's: a styled HTML page that quotes nothing unescaped) with the
 * security headers; a 2xx only for input that deserves it, and a minted id always carries the
 * session's subject and tenant, whatever the body said.
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
/** The edge's configured public URL: the only address whose embed URLs oEmbed answers for. */
const PUBLIC_URL = 'https://charts.example.com/analytics';
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
    settings: { rateLimit: { perId: false, perIp: false }, publicUrl: PUBLIC_URL },
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
    [
      ...ledger.rows(),
      [
        'GET /embed/<id> (HTML refusals)',
        embedCases.count,
        embedCases.statuses.get(200) ?? 0,
        [...embedCases.statuses]
          .filter(([status]) => status !== 200)
          .sort(([a], [b]) => a - b)
          .map(([status, n]) => `${status}×${n}`)
          .join(' '),
        0,
        0,
      ],
    ],
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

/** Bodies the studio's mint route accepts, for mutation. */
const STUDIO_TEMPLATES = [
  { query: 'public-daily', label: 'Home page', ttl: '30d' },
  {
    query: 'public-daily',
    params: { tenant: TENANT },
    label: 'Blog "Q3" & co',
    ttl: '7d',
    aud: ['https://blog.example'],
    options: { range: '7d', theme: 'dark', height: 320, locale: 'de-CH', refresh: 60 },
  },
];

/**
 * The studio's promise: a minted id is public, names the offered query, and carries the
 * session's own tenant whatever the body said; without a session nothing is minted.
 */
function studioJudge(body: Buffer, cookie: string | undefined, contentType: string) {
  return (answer: RawResponse): string[] => {
    const signedIn = cookie === valid.cookie || cookie === valid.otherCookie;
    if (!signedIn) {
      const expected = body.length > 16_384 ? 413 : 401;
      return answer.status === expected
        ? []
        : [`${answer.status} without a session (expected ${expected})`];
    }
    if (answer.status === 200) return ['200 where a mint answers 201'];
    if (answer.status !== 201) return [];
    if (!/^application\/json/i.test(contentType)) return ['201 for a body not declared JSON'];
    const { url } = JSON.parse(answer.text) as { url?: unknown };
    const id = typeof url === 'string' ? decodeURIComponent(url.split('/embed/')[1] ?? '') : '';
    const claims = mintedClaims(id.split('?')[0]);
    if (typeof claims === 'string') return [claims];
    const tenant = cookie === valid.cookie ? TENANT : 'globex';
    const problems: string[] = [];
    if (claims.pub !== true) problems.push('the studio minted an id that is not public');
    if (claims.sub !== undefined) problems.push('the studio minted a session-bound id');
    if (claims.q !== 'public-daily') problems.push(`minted for query ${String(claims.q)}`);
    const p = claims.p as Record<string, unknown> | undefined;
    if (p?.tenant !== tenant) {
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

/** Whether embed options deserve a page: each known option at most once, within its bounds. */
function embedOptionsDeserve(search: URLSearchParams, q: string): boolean {
  const seen = new Set<string>();
  for (const [key, value] of search) {
    if (seen.has(key)) return false;
    seen.add(key);
    if (key === 'range' && !(RANGES[q] ?? []).includes(value)) return false;
    if (key === 'theme' && !['light', 'dark', 'auto'].includes(value)) return false;
    if (key === 'height' && !(/^[0-9]{1,4}$/.test(value) && +value >= 80 && +value <= 2000))
      return false;
    if (key === 'locale') {
      if (value.length > 35) return false;
      try {
        if (Intl.getCanonicalLocales(value).length !== 1) return false;
      } catch {
        return false;
      }
    }
    if (!['range', 'theme', 'height', 'locale'].includes(key)) return false;
  }
  return true;
}

/** The public query an embed path's id names when it deserves a page, else undefined. */
function embeddable(token: string): string | undefined {
  const id = idQuery.get(token);
  return id && id.sub === undefined ? id.q : undefined;
}

/** Embed options: allowed, out of bounds, repeated, unknown, hostile. */
const embedQuery: fc.Arbitrary<string> = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      '',
      '?range=7d',
      '?range=24h&theme=dark',
      '?theme=auto&height=2000&locale=de-CH',
      '?height=80',
      '?height=79',
      '?height=0300',
      '?height=1e3',
      '?locale=en_US',
      '?locale=%3Cscript%3E',
      '?theme=light&theme=dark',
      '?endpoint=https%3A%2F%2Fevil.example',
      '?query-id=x',
      '?__proto__=1',
    ),
    weight: 3,
  },
  {
    arbitrary: fc
      .array(fc.tuple(fc.constantFrom('range', 'theme', 'height', 'locale', 'x'), hostileString), {
        maxLength: 3,
      })
      .map((pairs) =>
        pairs.length
          ? `?${pairs.map(([k, v]) => `${k}=${percent(v.slice(0, 2000))}`).join('&')}`
          : '',
      ),
    weight: 2,
  },
);

/** An embed path's id: a valid one (public or session-bound), mutated, or hostile. */
const embedToken: fc.Arbitrary<string> = fc.oneof(
  {
    arbitrary: fc
      .constantFrom('publicDaily', 'publicCount', 'session')
      .map((n) => valid[n as keyof typeof valid]),
    weight: 3,
  },
  { arbitrary: mutatedId, weight: 4 },
  { arbitrary: hostileString.map((text) => text.slice(0, 3000)), weight: 1 },
);

/** The rules of an embed page answer; a 200 only for a public id with deserving options. */
function embedPageProblems(token: string, query: string, answer: RawResponse): string[] {
  if (answer.status === 0) return [`no answer (${answer.failure})`];
  const problems: string[] = [];
  const q = embeddable(token);
  const deserves = q !== undefined && embedOptionsDeserve(new URLSearchParams(query), q);
  if (deserves !== (answer.status === 200)) {
    problems.push(
      `${answer.status} but the page ${deserves ? 'deserves' : 'does not deserve'} a 200`,
    );
  }
  if (answer.status >= 500 || (answer.status >= 300 && answer.status < 400)) {
    problems.push(`status ${answer.status}`);
  }
  const whole = `${JSON.stringify(answer.headers)}\n${answer.text}`;
  for (const secret of secretList)
    if (whole.includes(secret)) problems.push('a secret is in the answer');
  for (const [name, value] of Object.entries(API_HEADERS)) {
    const expected = name === 'Cross-Origin-Resource-Policy' ? 'cross-origin' : value;
    if (answer.headers[name.toLowerCase()] !== expected) problems.push(`header ${name}`);
  }
  if (answer.headers['content-type'] !== 'text/html; charset=utf-8') {
    problems.push(`content-type ${answer.headers['content-type']}`);
  }
  const csp = answer.headers['content-security-policy'] ?? '';
  if (
    !csp.includes("script-src 'self'") ||
    !/frame-ancestors [^;]+/.test(csp) ||
    csp.includes('unsafe')
  ) {
    problems.push(`CSP ${csp}`);
  }
  // Only the edge's own two script files, and a refusal's sentence quotes nothing unescaped.
  const scripts = answer.text.match(/<script\b/g)?.length ?? 0;
  if (scripts !== (answer.status === 200 ? 2 : 1)) problems.push(`${scripts} script tags`);
  const sentence = /<span>([\s\S]*?)<\/span>/.exec(answer.text)?.[1];
  if (answer.status !== 200 && (sentence === undefined || /[<>"]/.test(sentence))) {
    problems.push(`refusal sentence ${String(sentence).slice(0, 80)}`);
  }
  for (const text of ['\n    at ', 'node_modules', 'file://', 'TypeError']) {
    if (answer.text.includes(text)) problems.push(`server text '${text.trim()}'`);
  }
  return problems;
}

/**
 * Whether the path names an embed page at all: an empty id or a dot segment (which URL parsing
 * removes) is another address, the JSON 404. A slash in the id is sent as %2f and stays in it.
 */
function routesToEmbed(token: string): boolean {
  return token !== '' && token !== '.' && token !== '..';
}

async function fuzzEmbedPage(token: string, query: string) {
  const path = `/embed/${percent(token)}${query}`;
  const answer = await rawRequest(edge.url, { method: 'GET', path });
  embedCases.count++;
  embedCases.statuses.set(answer.status, (embedCases.statuses.get(answer.status) ?? 0) + 1);
  // Node's parser refuses a head over 16 KB itself, before the edge.
  if (path.length > 15_000 && answer.status === 431) return;
  const problems = routesToEmbed(token)
    ? embedPageProblems(token, query, answer)
    : answer.status === 404
      ? []
      : [`${answer.status} for a path that is no embed page`];
  if (problems.length) {
    throw new Error(
      `GET /embed: ${problems.join('; ')}\n  path: ${path.slice(0, 300)}\n  answer: ${answer.status} ${answer.text.slice(0, 300)}`,
    );
  }
}

/** The embed page's tally (its refusals are HTML, so it is judged apart from the JSON ledger). */
const embedCases = { count: 0, statuses: new Map<number, number>() };

/** The oEmbed promise: an answer within the sizes asked, for this edge's own embeddable URLs only. */
function oembedJudge(url: string, maxwidth: number | undefined, maxheight: number | undefined) {
  return (answer: RawResponse): string[] => {
    let deserves = false;
    const prefix = `${PUBLIC_URL}/embed/`;
    if (url.startsWith(prefix)) {
      const target = new URL(url);
      const rest = target.pathname.slice(new URL(prefix).pathname.length);
      let token = '';
      try {
        token = decodeURIComponent(rest);
      } catch {
        token = '';
      }
      const q = rest.includes('/') ? undefined : embeddable(token);
      const height = Number(target.searchParams.get('height') ?? 300);
      deserves =
        q !== undefined &&
        embedOptionsDeserve(target.searchParams, q) &&
        (maxheight === undefined || maxheight >= 80 || maxheight >= height);
    }
    if (deserves !== (answer.status === 200)) {
      return [
        `${answer.status} but the URL ${deserves ? 'deserves' : 'does not deserve'} an answer`,
      ];
    }
    if (answer.status !== 200) return [];
    const body = JSON.parse(answer.text) as Record<string, unknown>;
    const problems: string[] = [];
    if (body.version !== '1.0' || body.type !== 'rich') problems.push('not oEmbed 1.0 rich');
    if (maxwidth !== undefined && (body.width as number) > maxwidth) problems.push('too wide');
    if (maxheight !== undefined && (body.height as number) > maxheight) problems.push('too tall');
    if (!String(body.html).startsWith(`<iframe src="${PUBLIC_URL}/embed/`)) problems.push('html');
    return problems;
  };
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

  test('GET /embed/<id>: hostile ids and viewer options', async () => {
    await fc.assert(
      fc.asyncProperty(embedToken, embedQuery, (token, query) => fuzzEmbedPage(token, query)),
      { numRuns: runs },
    );
  });

  test('GET /oembed: hostile URLs and sizes', async () => {
    const size = fc.option(
      fc.oneof(fc.integer({ min: 1, max: 5000 }), fc.constantFrom(79, 80, 299, 300)),
      { nil: undefined },
    );
    const url = fc.oneof(
      {
        arbitrary: fc
          .tuple(embedToken, embedQuery)
          .map(([token, query]) => `${PUBLIC_URL}/embed/${percent(token)}${query}`),
        weight: 4,
      },
      {
        arbitrary: fc
          .tuple(
            fc.constantFrom(
              'https://evil.example/analytics/embed/',
              'http://charts.example.com/analytics/embed/',
              `${PUBLIC_URL}/api/data?`,
              `${PUBLIC_URL}/embed`,
              'javascript:alert(1)//',
              '',
            ),
            fc.constantFrom('publicDaily', 'publicCount'),
          )
          .map(([prefix, name]) => `${prefix}${valid[name as keyof typeof valid]}`),
        weight: 1,
      },
      { arbitrary: hostileString.map((text) => text.slice(0, 2000)), weight: 1 },
    );
    await fc.assert(
      fc.asyncProperty(url, size, size, async (target, maxwidth, maxheight) => {
        const sizes = `${maxwidth === undefined ? '' : `&maxwidth=${maxwidth}`}${maxheight === undefined ? '' : `&maxheight=${maxheight}`}`;
        const path = `/oembed?format=json&url=${percent(target)}${sizes}`;
        await ledger.send(
          'GET /oembed',
          { method: 'GET', path },
          // A URL encoded twice may pass Node's 16 KB head limit: its parser answers itself.
          {
            judge: oembedJudge(target, maxwidth, maxheight),
            parserMayRefuse: path.length > 15_000,
          },
        );
      }),
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

  test('POST /api/studio/embeds: mutated bodies, content types and sessions', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          { arbitrary: fc.constantFrom(...STUDIO_TEMPLATES).chain(mutatedBody), weight: 4 },
          { arbitrary: hostileValue, weight: 1 },
        ),
        contentTypes,
        cookieChoice,
        async (value, contentType, cookie) => {
          const body = Buffer.from(toJsonText(value));
          await ledger.send(
            'POST /api/studio/embeds',
            postRequest('/api/studio/embeds', body, contentType, cookie),
            { judge: studioJudge(body, cookie, contentType) },
          );
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
