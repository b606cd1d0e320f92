/**
 * Item 5: token attacks in one place, against running edge processes (a counting service in
 * front of the real engine behind them). Ids are forged here with Node's crypto, independently of
 * the edge's signer. Each attack expects the status and code the edge's README documents, and
 * no refused attack may cause a backend call. Controls (valid ids, harmless variations) show
 * the same requests succeed when they should. Then the key rotation: the previous key dropped
 * by a restart with only the new key.
 */
import { generateKeyPairSync, randomUUID, sign as rsaSign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ServerProcess } from '../src/child-process.ts';
import { type FaultService, startFaultService } from '../src/fault-service.ts';
import { type Cell, reportFigures } from '../src/figures.ts';
import {
  b64url,
  forgeJwt,
  hmac,
  keysEnv,
  newKey,
  publicId,
  sessionCookie,
  sessionId,
  type TestKey,
} from '../src/forge-jwt.ts';
import { postJson } from '../src/post-json.ts';
import {
  type EngineUnderTest,
  newEdgeSecrets,
  startEdge,
  startSeededEngine,
} from '../src/system-under-test.ts';

const REVOKED_JTI = 'revoked-jti-0001';
const now = () => Math.floor(Date.now() / 1000);

let engine: EngineUnderTest;
let service: FaultService;
let edge: ServerProcess;
const secrets = newEdgeSecrets('k2');
/** The previous key: verified during the rotation, then dropped. */
const previous: TestKey = newKey('k1');
const current = secrets.key;
const rows: Cell[][] = [];

const alice = () => sessionCookie(secrets.sessionSecret, 'alice', 'acme');
const mallory = () => sessionCookie(secrets.sessionSecret, 'mallory', 'acme');
const bob = () => sessionCookie(secrets.sessionSecret, 'bob', 'globex');
/** Alice after moving to another tenant: same subject, other tenant. */
const aliceElsewhere = () => sessionCookie(secrets.sessionSecret, 'alice', 'globex');

beforeAll(async () => {
  engine = await startSeededEngine(300);
  service = await startFaultService(engine.url);
  edge = await startEdge(
    secrets,
    { url: service.url, apiKey: engine.apiKey },
    { signingKeys: keysEnv(current, previous), revokedIds: [REVOKED_JTI] },
  );
});

afterAll(async () => {
  reportFigures(
    'token-attacks',
    `Token attacks against the edge process (${rows.length} attempts)`,
    ['attack', 'what was sent', 'expected', 'got', 'backend calls'],
    rows,
  );
  await edge?.stop();
  await service?.close();
  await engine?.close();
});

interface Attempt {
  attack: string;
  sent: string;
  /** `200` for controls; else the documented refusal, `401 invalid` etc. */
  expected: string;
  request: () => { path?: string; headers: Record<string, string> };
}

async function tryData(attempt: Attempt, server: ServerProcess = edge): Promise<void> {
  const { path = '/api/data', headers } = attempt.request();
  const before = service.calls.length;
  const response = await fetch(`${server.url}${path}`, { headers });
  const text = await response.text();
  const body = JSON.parse(text) as { code?: string; error?: string };
  const calls = service.calls.length - before;
  const got = response.status === 200 ? '200' : `${response.status} ${body.code}`;
  rows.push([attempt.attack, attempt.sent, attempt.expected, got, calls]);
  expect(got, `${attempt.attack}: ${attempt.sent}`).toBe(attempt.expected);
  if (attempt.expected !== '200') {
    expect(calls, 'a refused id reached the backend').toBe(0);
    expect(Object.keys(body).sort()).toEqual(['code', 'error']);
  }
  for (const secret of [current.secret, previous.secret, secrets.sessionSecret, engine.apiKey]) {
    expect(text).not.toContain(secret);
  }
}

const bearer =
  (id: string, extra: Record<string, string> = {}) =>
  () => ({
    headers: { authorization: `Bearer ${id}`, ...extra },
  });
const pubClaims = (extra: Record<string, unknown> = {}) => ({
  q: 'public-count',
  p: { tenant: 'acme' },
  pub: true,
  iat: now(),
  exp: now() + 600,
  jti: randomUUID(),
  ...extra,
});
const header = (extra: Record<string, unknown> = {}) => ({
  alg: 'HS256',
  typ: 'JWT',
  kid: current.kid,
  ...extra,
});
const parts = (id: string) => id.split('.') as [string, string, string];
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** The same bytes with the unused low bits of the last character set; the part must have some. */
function otherSpelling(part: string): string {
  const unused = [0, 0, 0b1111, 0b11][part.length % 4] ?? 0;
  if (unused === 0) throw new Error('this part has no unused bits');
  const last = ALPHABET.indexOf(part.charAt(part.length - 1));
  return `${part.slice(0, -1)}${ALPHABET[last | 1]}`;
}
/** A jti that leaves unused bits in the base64url payload of these claims. */
function payloadJti(claims: (extra: Record<string, unknown>) => Record<string, unknown>): string {
  for (let n = 8; ; n++) {
    const jti = 'j'.repeat(n);
    if (b64url(claims({ jti })).length % 4 >= 2) return jti;
  }
}

describe('forged and altered ids on the data route', () => {
  const attempts: Attempt[] = [];
  const add = (attack: string, sent: string, expected: string, request: Attempt['request']) =>
    attempts.push({ attack, sent, expected, request });

  // Controls: the same route answers 200 to honest requests.
  add('control', 'valid public id', '200', () =>
    bearer(publicId(current, 'public-count', { tenant: 'acme' }))(),
  );
  add('control', 'valid id signed with the previous key (during rotation)', '200', () =>
    bearer(publicId(previous, 'public-count', { tenant: 'acme' }))(),
  );
  add('control', 'valid session id with its own session', '200', () =>
    bearer(sessionId(current, 'daily', 'alice', { tenant: 'acme' }), { cookie: alice() })(),
  );
  add('control', 'lower-case scheme, spaces around the id', '200', () => ({
    headers: {
      authorization: `bearer   ${publicId(current, 'public-count', { tenant: 'acme' })}  `,
    },
  }));
  add('control', 'nbf 10 s ahead (inside the 30 s clock skew)', '200', () =>
    bearer(forgeJwt(header(), pubClaims({ nbf: now() + 10 }), current.secret))(),
  );

  // Signature stripping and alg games.
  add('signature stripping', 'header.payload. (empty signature)', '401 invalid', () => {
    const [h, p] = parts(publicId(current, 'public-count', { tenant: 'acme' }));
    return bearer(`${h}.${p}.`)();
  });
  add('signature stripping', 'header.payload (two segments)', '401 invalid', () => {
    const [h, p] = parts(publicId(current, 'public-count', { tenant: 'acme' }));
    return bearer(`${h}.${p}`)();
  });
  for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
    add('alg none', `alg "${alg}", no signature`, '401 invalid', () =>
      bearer(forgeJwt(header({ alg }), pubClaims(), null))(),
    );
  }
  add('alg none', 'alg "none" with a valid HS256 signature', '401 invalid', () => {
    const input = `${b64url(header({ alg: 'none' }))}.${b64url(pubClaims())}`;
    return bearer(`${input}.${hmac(input, current.secret)}`)();
  });
  for (const alg of ['HS384', 'HS512']) {
    add('alg confusion', `${alg}, HMAC with the real key`, '401 invalid', () =>
      bearer(forgeJwt(header({ alg }), pubClaims(), current.secret))(),
    );
  }
  for (const alg of ['RS256', 'ES256', 'PS256', 'EdDSA']) {
    add('alg confusion', `${alg} header, HMAC-SHA256 with the real key`, '401 invalid', () => {
      const input = `${b64url(header({ alg }))}.${b64url(pubClaims())}`;
      return bearer(`${input}.${hmac(input, current.secret)}`)();
    });
  }
  add(
    'alg confusion',
    'RS256 signed with an attacker key, public key in jwk',
    '401 invalid',
    () => {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const input = `${b64url(header({ alg: 'RS256', jwk: publicKey.export({ format: 'jwk' }) }))}.${b64url(pubClaims())}`;
      return bearer(
        `${input}.${rsaSign('sha256', Buffer.from(input), privateKey).toString('base64url')}`,
      )();
    },
  );
  add('alg confusion', 'HS256 with jku/x5u pointing elsewhere, attacker key', '401 invalid', () =>
    bearer(
      forgeJwt(
        header({ jku: 'http://127.0.0.1:9/keys', x5u: 'http://127.0.0.1:9/x5u', kid: 'attacker' }),
        pubClaims(),
        'attacker-secret-attacker-secret-1',
      ),
    )(),
  );
  add('alg confusion', 'alg missing', '401 invalid', () =>
    bearer(forgeJwt({ typ: 'JWT', kid: current.kid }, pubClaims(), current.secret))(),
  );

  // One accepted encoding: the same bytes spelled another way are refused.
  add('encoding', 'signature with its unused low bits set (same bytes)', '401 invalid', () => {
    const [h, p, sig] = parts(publicId(current, 'public-count', { tenant: 'acme' }));
    const other = otherSpelling(sig);
    expect(Buffer.from(other, 'base64url')).toEqual(Buffer.from(sig, 'base64url'));
    return bearer(`${h}.${p}.${other}`)();
  });
  add('encoding', 'payload with its unused low bits set (same bytes)', '401 invalid', () => {
    // A jti of a length that leaves unused bits in the payload's last character.
    const [h, p] = parts(
      forgeJwt(header(), pubClaims({ jti: payloadJti(pubClaims) }), current.secret),
    );
    const other = otherSpelling(p);
    expect(Buffer.from(other, 'base64url')).toEqual(Buffer.from(p, 'base64url'));
    return bearer(`${h}.${other}.${hmac(`${h}.${other}`, current.secret)}`)();
  });
  for (const [where, index] of [
    ['header', 0],
    ['payload', 1],
    ['signature', 2],
  ] as const) {
    add('encoding', `${where} padded with =`, '401 invalid', () => {
      const split = parts(publicId(current, 'public-count', { tenant: 'acme' }));
      split[index] = `${split[index]}=`;
      return bearer(split.join('.'))();
    });
    add('encoding', `${where} in standard base64 (+ and /)`, '401 invalid', () => {
      const split = parts(publicId(current, 'public-count', { tenant: 'acme' }));
      split[index] = `${split[index]?.slice(0, -1)}+`;
      return bearer(split.join('.'))();
    });
  }

  // kid injection.
  const kids: Array<[string, unknown, string | null]> = [
    ['path traversal, empty secret', '../../../../../../dev/null', ''],
    ['path traversal, key file name', '../../.data/edge-signing-keys', 'x'],
    ['SQL-ish', "k2' OR '1'='1", current.secret],
    ['SQL-ish UNION', "x' UNION SELECT 'secret", 'secret'],
    ['unknown kid', 'k9', current.secret],
    ['empty kid', '', current.secret],
    ['numeric kid', 2, current.secret],
    ['null kid', null, current.secret],
    ['array kid', [current.kid], current.secret],
    ['object kid', { $ne: '' }, current.secret],
    ['kid with NUL', `${current.kid}\u0000`, current.secret],
    ['kid __proto__', '__proto__', current.secret],
    ['kid constructor', 'constructor', current.secret],
    ['kid toString', 'toString', current.secret],
    ['kid 5,000 characters', 'k'.repeat(5000), current.secret],
  ];
  for (const [name, kid, secret] of kids) {
    add('kid injection', name, '401 invalid', () =>
      bearer(forgeJwt(header({ kid }), pubClaims(), secret))(),
    );
  }
  add('kid injection', 'no kid', '401 invalid', () =>
    bearer(forgeJwt({ alg: 'HS256', typ: 'JWT' }, pubClaims(), current.secret))(),
  );

  // Time claims (signed with the real key: only the clock refuses them).
  add('expired', 'exp 1 s ago', '401 expired', () =>
    bearer(forgeJwt(header(), pubClaims({ iat: now() - 600, exp: now() - 1 }), current.secret))(),
  );
  add('expired', 'exp in 1970', '401 expired', () =>
    bearer(forgeJwt(header(), pubClaims({ iat: 0, exp: 1 }), current.secret))(),
  );
  add('expired + tampered', 'expired id with an edited payload', '401 invalid', () => {
    const [h, , s] = parts(
      forgeJwt(header(), pubClaims({ iat: now() - 600, exp: now() - 1 }), current.secret),
    );
    return bearer(`${h}.${b64url(pubClaims({ iat: now() - 600, exp: now() + 600 }))}.${s}`)();
  });
  add('not yet valid', 'nbf in an hour', '401 invalid', () =>
    bearer(forgeJwt(header(), pubClaims({ nbf: now() + 3600 }), current.secret))(),
  );
  add('issued in the future', 'iat in an hour', '401 invalid', () =>
    bearer(
      forgeJwt(header(), pubClaims({ iat: now() + 3600, exp: now() + 7200 }), current.secret),
    )(),
  );
  add('claim types', 'exp as a string', '401 invalid', () =>
    bearer(forgeJwt(header(), pubClaims({ exp: String(now() + 600) }), current.secret))(),
  );
  add('claim types', 'exp NaN-like (1e400 literal)', '401 invalid', () => {
    const payload = b64url(JSON.stringify(pubClaims()).replace(/"exp":\d+/, '"exp":1e400'));
    const input = `${b64url(header())}.${payload}`;
    return bearer(`${input}.${hmac(input, current.secret)}`)();
  });

  // Replay across sessions and tenants.
  const alicesId = () => sessionId(current, 'daily', 'alice', { tenant: 'acme' });
  add('replay across sessions', "alice's id, no session", '401 forbidden', () =>
    bearer(alicesId())(),
  );
  add(
    'replay across sessions',
    "alice's id, mallory's session (same tenant)",
    '403 forbidden',
    () => bearer(alicesId(), { cookie: mallory() })(),
  );
  add('replay across tenants', "alice's id, bob's session (other tenant)", '403 forbidden', () =>
    bearer(alicesId(), { cookie: bob() })(),
  );
  add('replay across tenants', "alice's id, alice now in another tenant", '403 forbidden', () =>
    bearer(alicesId(), { cookie: aliceElsewhere() })(),
  );
  add(
    'replay across tenants',
    "alice's acme id re-signed by nobody, tenant edited to globex",
    '401 invalid',
    () => {
      const [h, , s] = parts(alicesId());
      const claims = JSON.parse(
        Buffer.from(parts(alicesId())[1], 'base64url').toString(),
      ) as Record<string, unknown>;
      return bearer(`${h}.${b64url({ ...claims, p: { tenant: 'globex' } })}.${s}`, {
        cookie: aliceElsewhere(),
      })();
    },
  );
  add(
    'forged session',
    "alice's id, session cookie signed with another secret",
    '401 forbidden',
    () => bearer(alicesId(), { cookie: sessionCookie('x'.repeat(40), 'alice', 'acme') })(),
  );
  add('forged session', "alice's id, session cookie with alg none", '401 forbidden', () =>
    bearer(alicesId(), {
      cookie: `session=${forgeJwt({ alg: 'none', typ: 'JWT' }, { sub: 'alice', tenant: 'acme', exp: now() + 600 }, null)}`,
    })(),
  );
  add(
    'audience',
    'public id for https://good.example shown on https://evil.example',
    '403 forbidden',
    () =>
      bearer(forgeJwt(header(), pubClaims({ aud: 'https://good.example' }), current.secret), {
        origin: 'https://evil.example',
      })(),
  );

  // Payload swaps, size, encodings.
  add(
    'payload swap',
    "acme id's header+payload with a globex id's signature",
    '401 invalid',
    () => {
      const a = parts(publicId(current, 'public-count', { tenant: 'acme' }));
      const b = parts(publicId(current, 'public-count', { tenant: 'globex' }));
      return bearer(`${a[0]}.${a[1]}.${b[2]}`)();
    },
  );
  add('payload swap', 'public-count payload into a public-daily id', '401 invalid', () => {
    const a = parts(publicId(current, 'public-daily', { tenant: 'acme' }));
    const b = parts(publicId(current, 'public-count', { tenant: 'globex' }));
    return bearer(`${a[0]}.${b[1]}.${a[2]}`)();
  });
  add('payload swap', 'signature of one id, header of another kid', '401 invalid', () => {
    const a = parts(publicId(current, 'public-count', { tenant: 'acme' }));
    const b = parts(publicId(previous, 'public-count', { tenant: 'acme' }));
    return bearer(`${b[0]}.${a[1]}.${a[2]}`)();
  });
  add('oversized id', 'validly signed id of 9,000 characters', '401 invalid', () =>
    bearer(forgeJwt(header(), pubClaims({ pad: 'x'.repeat(6600) }), current.secret))(),
  );
  add('oversized id', 'id of 1 MB', '401 invalid', () => bearer(`${'a'.repeat(10_000)}.b.c`)());
  const valid = () => publicId(current, 'public-count', { tenant: 'acme' });
  add('base64 games', '= padding on each segment', '401 invalid', () =>
    bearer(
      parts(valid())
        .map((p) => `${p}==`)
        .join('.'),
    )(),
  );
  add('base64 games', 'standard base64 (+ and /) instead of base64url', '401 invalid', () => {
    const [h, p, s] = parts(valid());
    const std = (x: string) => Buffer.from(x, 'base64url').toString('base64');
    return bearer(`${std(h)}.${std(p)}.${std(s)}`)();
  });
  add('base64 games', 'space inside the signature', '401 invalid', () => {
    const id = valid();
    return bearer(`${id.slice(0, -5)} ${id.slice(-5)}`)();
  });
  add('base64 games', 'tab between segments', '401 invalid', () =>
    bearer(parts(valid()).join('.\t'))(),
  );
  add('base64 games', 'signature with one bit flipped', '401 invalid', () => {
    const [h, p, s] = parts(valid());
    const raw = Buffer.from(s, 'base64url');
    raw[0] = (raw[0] ?? 0) ^ 1;
    return bearer(`${h}.${p}.${raw.toString('base64url')}`)();
  });
  add('base64 games', 'fourth segment appended', '401 invalid', () => bearer(`${valid()}.AAAA`)());
  add('base64 games', 'payload re-encoded with a trailing newline', '401 invalid', () => {
    const [h, p, s] = parts(valid());
    return bearer(`${h}.${b64url(`${Buffer.from(p, 'base64url').toString()}\n`)}.${s}`)();
  });

  // Where the id travels.
  add('id placement', 'id in the query string (?id=), no header', '401 invalid', () => ({
    path: `/api/data?id=${valid()}`,
    headers: {},
  }));
  add('id placement', 'valid header plus ?token= in the query string', '400 bad_request', () => ({
    path: `/api/data?token=${valid()}`,
    headers: { authorization: `Bearer ${valid()}` },
  }));
  add('id placement', 'id as a cookie only', '401 invalid', () => ({
    headers: { cookie: `id=${valid()}` },
  }));
  add('id placement', 'Basic scheme', '401 invalid', () => ({
    headers: { authorization: `Basic ${valid()}` },
  }));
  add('revoked', `jti ${REVOKED_JTI} (EDGE_REVOKED_IDS)`, '401 invalid', () =>
    bearer(forgeJwt(header(), pubClaims({ jti: REVOKED_JTI }), current.secret))(),
  );

  for (const attempt of attempts) {
    test(`${attempt.attack}: ${attempt.sent}`, () => tryData(attempt));
  }
});

describe('renewal and signing attacks', () => {
  async function tryPost(
    attack: string,
    sent: string,
    expected: string,
    path: string,
    body: unknown,
    cookie?: string,
  ) {
    const before = service.calls.length;
    const answer = await postJson(`${edge.url}${path}`, body, {
      headers: cookie ? { cookie } : {},
    });
    const got = answer.status === 200 ? '200' : `${answer.status} ${answer.body?.code}`;
    rows.push([attack, sent, expected, got, service.calls.length - before]);
    expect(got, `${attack}: ${sent}`).toBe(expected);
    return answer;
  }
  const aliceId = (extra: Record<string, unknown> = {}) =>
    sessionId(current, 'daily', 'alice', { tenant: 'acme' }, extra);

  test('renew', async () => {
    await tryPost(
      'control',
      'renew own id, recently expired',
      '200',
      '/api/renew',
      { id: aliceId({ iat: now() - 700, exp: now() - 100 }) },
      alice(),
    );
    await tryPost(
      'renew replay',
      "renew alice's id as mallory",
      '403 forbidden',
      '/api/renew',
      { id: aliceId() },
      mallory(),
    );
    await tryPost(
      'renew replay',
      "renew alice's id as alice in another tenant",
      '403 forbidden',
      '/api/renew',
      { id: aliceId() },
      aliceElsewhere(),
    );
    await tryPost('renew replay', 'renew without a session', '401 forbidden', '/api/renew', {
      id: aliceId(),
    });
    await tryPost(
      'renew',
      'renew a public id',
      '403 forbidden',
      '/api/renew',
      { id: publicId(current, 'public-count', { tenant: 'acme' }) },
      alice(),
    );
    await tryPost(
      'renew',
      'renew an id expired 25 h ago (grace 24 h)',
      '401 invalid',
      '/api/renew',
      { id: aliceId({ iat: now() - 90_600, exp: now() - 90_000 }) },
      alice(),
    );
    await tryPost(
      'renew',
      'renew a revoked jti',
      '401 invalid',
      '/api/renew',
      { id: aliceId({ jti: REVOKED_JTI }) },
      alice(),
    );
    await tryPost(
      'renew',
      'renew an id with alg none',
      '401 invalid',
      '/api/renew',
      {
        id: forgeJwt(
          header({ alg: 'none' }),
          {
            q: 'daily',
            p: { tenant: 'acme' },
            sub: 'alice',
            iat: now(),
            exp: now() + 600,
            jti: 'x',
          },
          null,
        ),
      },
      alice(),
    );
    await tryPost(
      'renew',
      'renew an id whose tenant was edited',
      '401 invalid',
      '/api/renew',
      {
        id: (() => {
          const [h, , s] = parts(aliceId());
          return `${h}.${b64url({ q: 'daily', p: { tenant: 'globex' }, sub: 'alice', iat: now(), exp: now() + 600, jti: 'edited' })}.${s}`;
        })(),
      },
      alice(),
    );
  });

  test('sign', async () => {
    const mine = await tryPost(
      'control',
      'sign for own session',
      '200',
      '/api/sign',
      { query: 'daily' },
      alice(),
    );
    const claims = JSON.parse(
      Buffer.from(String(mine.body.id).split('.')[1] ?? '', 'base64url').toString(),
    );
    expect(claims).toMatchObject({ sub: 'alice', p: { tenant: 'acme' } });
    await tryPost(
      'sign',
      'sign with tenant set in the body',
      '400 bad_request',
      '/api/sign',
      { query: 'daily', params: { tenant: 'globex' } },
      alice(),
    );
    await tryPost('sign', 'sign without a session', '401 forbidden', '/api/sign', {
      query: 'daily',
    });
    await tryPost(
      'sign',
      'sign with a forged session (other secret)',
      '401 forbidden',
      '/api/sign',
      { query: 'daily' },
      sessionCookie('y'.repeat(40), 'alice', 'acme'),
    );
    await tryPost(
      'sign',
      'sign with a lifetime past the 1 h maximum',
      '400 bad_request',
      '/api/sign',
      { query: 'daily', ttl: '30d' },
      alice(),
    );
    await tryPost(
      'sign',
      "sign a public query with another tenant's value",
      '403 forbidden',
      '/api/sign',
      { query: 'public-count', params: { tenant: 'globex' } },
      alice(),
    );
    await tryPost(
      'sign',
      'sign a query the registry lacks',
      '404 not_found',
      '/api/sign',
      { query: 'admin-everything' },
      alice(),
    );
  });
});

describe('rotation: the previous key dropped', () => {
  test('after a restart with only the new key, ids of the old key are refused at once', async () => {
    const oldId = publicId(previous, 'public-count', { tenant: 'acme' });
    const newId = publicId(current, 'public-count', { tenant: 'acme' });
    // Before: both verify (the control above); the old one is even remembered as verified.
    await tryData({
      attack: 'rotation',
      sent: 'old-key id before the rotation',
      expected: '200',
      request: bearer(oldId),
    });
    await edge.stop();
    edge = await startEdge(
      secrets,
      { url: service.url, apiKey: engine.apiKey },
      {
        signingKeys: keysEnv(current),
        revokedIds: [REVOKED_JTI],
      },
    );
    await tryData({
      attack: 'rotated-out key',
      sent: 'id minted with the dropped key k1',
      expected: '401 invalid',
      request: bearer(oldId),
    });
    await tryData({
      attack: 'rotated-out key',
      sent: 'fresh id minted with k1 after the drop',
      expected: '401 invalid',
      request: bearer(publicId(previous, 'public-count', { tenant: 'acme' })),
    });
    await tryData({
      attack: 'control',
      sent: 'id of the new key k2 after the drop',
      expected: '200',
      request: bearer(newId),
    });
    const renew = await postJson(
      `${edge.url}/api/renew`,
      { id: sessionId(previous, 'daily', 'alice', { tenant: 'acme' }) },
      { headers: { cookie: alice() } },
    );
    rows.push([
      'rotated-out key',
      'renew an id of the dropped key',
      '401 invalid',
      `${renew.status} ${renew.body?.code}`,
      0,
    ]);
    expect(renew.status).toBe(401);
    expect(renew.body.code).toBe('invalid');
  });
});
