import { describe, expect, it } from 'vitest';
import { compileDefinition, compileRegistry } from '../src/registry/compile-definition.ts';
import { resolveQuery } from '../src/registry/resolve-query.ts';
import { substituteParams } from '../src/registry/substitute-params.ts';
import { Keyring } from '../src/tokens/keyring.ts';
import { createQuerySigner, SignError } from '../src/tokens/query-signer.ts';
import { verifyQueryId } from '../src/tokens/verify-query-id.ts';

const tenantDaily = {
  title: 'Signups',
  query: {
    graph_type: 'Single Line',
    start: '7 days ago',
    end: 'now',
    filters: [
      ['tenant', '=', { $param: 'tenant' }],
      ['plan', '=', { $param: 'plan' }],
    ],
  },
  params: {
    tenant: { from: 'session' },
    plan: { from: 'signer', enum: ['free', 'pro'], default: 'free' },
  },
  ranges: {
    '7d': { label: 'Last 7 days', start: '7 days ago', end: 'now' },
    '12w': { label: 'Last 12 weeks', start: '12 weeks ago', end: 'now', granularity: 'Week' },
  },
};

function startupError(queries: Record<string, unknown>): string {
  try {
    compileRegistry(queries);
  } catch (error) {
    return (error as Error).message;
  }
  return 'no error';
}

describe('query registry', () => {
  it('compiles a valid definition with its ranges and default', () => {
    const compiled = compileDefinition(tenantDaily, 'daily');
    expect(compiled).toMatchObject({
      name: 'daily',
      graph: 'Single Line',
      sql: false,
      rangeKeys: ['7d', '12w'],
      defaultRange: '7d',
    });
  });

  it.each([
    [
      { query: { graph_type: 'Single Lin', start: '1 day ago', end: 'now' } },
      /query "broken": graph_type: unknown graph type 'Single Lin'/,
    ],
    [
      { query: { graph_type: 'Single Line', start: 'yesterdayy', end: 'now' } },
      /query "broken": start: could not parse 'yesterdayy'/,
    ],
    [
      {
        query: {
          graph_type: 'Single Line',
          start: '1 day ago',
          end: 'now',
          filters: [['t', '=', { $param: 'tenant' }]],
        },
      },
      /query "broken": placeholder \{"\$param": "tenant"\} names no declared parameter/,
    ],
    [
      { query: { graph_type: 'Samples', start: '1 day ago', end: 'now' } },
      /query "broken": Samples needs fields/,
    ],
    [
      {
        query: { graph_type: 'Bar Chart', split: 'c', start: '1 day ago', end: 'now' },
        fields: ['c'],
      },
      /fields applies to Samples and SQL Table only/,
    ],
    [
      { query: { graph_type: 'Single Line', start: '1 day ago', end: 'now', api_key: 'x' } },
      /holds an api_key/,
    ],
    [
      {
        query: { graph_type: 'Single Line', start: '1 day ago', end: 'now' },
        ranges: { bad: { label: 'Bad', start: 'soon', end: 'now' } },
      },
      /with range 'bad', start: could not parse 'soon'/,
    ],
    [
      {
        query: { graph_type: 'Single Line', start: '1 day ago', end: 'now' },
        ranges: { a: { label: 'A', start: '1 day ago', end: 'now' } },
        defaultRange: 'b',
      },
      /defaultRange 'b' is not one of its ranges/,
    ],
    [
      {
        query: { sql_query: 'SELECT 1', graph_type: 'Table' },
        ranges: { a: { label: 'A', start: '1 day ago', end: 'now' } },
      },
      /ranges apply to collection queries only/,
    ],
    [
      { query: { sql_query: 'SELECT 1', graph_type: 'Single Line' } },
      /Single Line in SQL mode needs timestamp_column/,
    ],
    [
      {
        query: {
          graph_type: 'Single Line',
          start: '1 day ago',
          end: 'now',
          filters: [['p', '=', { $param: 'p' }]],
        },
        params: { p: { from: 'signer', enum: ['a'], default: 'b' } },
      },
      /params\.p\.default expected one of "a"/,
    ],
    [
      { query: { graph_type: 'Single Line', start: '1 day ago', end: 'now' }, colour: 'red' },
      /query "broken": .*colour/,
    ],
  ])('refuses a broken definition, naming it (%#)', (definition, message) => {
    expect(startupError({ fine: tenantDaily, broken: definition })).toMatch(message);
  });

  it('substitutes whole values only, never into strings', () => {
    const out = substituteParams(
      {
        a: [{ $param: 'x' }, 'literal {"$param":"x"}'],
        b: { $param: 'x', other: 1 },
        c: { $param: 'y' },
      },
      { x: "'; DROP TABLE t; --", y: 3 },
    );
    expect(out).toEqual({
      a: ["'; DROP TABLE t; --", 'literal {"$param":"x"}'],
      b: { $param: 'x', other: 1 },
      c: 3,
    });
    expect(() => substituteParams({ $param: 'missing' }, {})).toThrow(
      /parameter 'missing' has no value/,
    );
  });

  it('resolves locked params and a range into one canonical cache key', () => {
    const compiled = compileDefinition(tenantDaily, 'daily');
    const week = resolveQuery(compiled, { tenant: 'acme', plan: 'pro' }, '12w');
    expect(week.ok).toBe(true);
    if (!week.ok) return;
    expect(week.value.body).toEqual({
      graph_type: 'Single Line',
      start: '12 weeks ago',
      end: 'now',
      granularity: 'Week',
      filters: [
        ['tenant', '=', 'acme'],
        ['plan', '=', 'pro'],
      ],
    });
    // The same query written in another key order by another definition shares the cache key.
    const twin = compileDefinition(
      {
        query: {
          end: 'now',
          filters: [
            ['tenant', '=', 'acme'],
            ['plan', '=', 'pro'],
          ],
          granularity: 'Week',
          start: '12 weeks ago',
          graph_type: 'Single Line',
        },
      },
      'twin',
    );
    const twinResolved = resolveQuery(twin, {}, undefined);
    expect(twinResolved.ok && twinResolved.value.cacheKey).toBe(week.value.cacheKey);
    const otherTenant = resolveQuery(compiled, { tenant: 'globex', plan: 'pro' }, '12w');
    expect(otherTenant.ok && otherTenant.value.cacheKey).not.toBe(week.value.cacheKey);
    // A missing session param is an error; a missing signer param falls back to its default.
    expect(resolveQuery(compiled, { plan: 'pro' }, '7d')).toEqual({
      ok: false,
      error: "parameter 'tenant' has no value",
    });
    const defaulted = resolveQuery(compiled, { tenant: 'acme' }, '7d');
    expect(defaulted.ok && defaulted.value.body.filters).toEqual([
      ['tenant', '=', 'acme'],
      ['plan', '=', 'free'],
    ]);
  });
});

describe('query signer', () => {
  const keyring = new Keyring([
    { kid: 'k1', secret: 'c2lnbmVyLXRlc3Qta2V5LTAxMjM0NTY3ODlhYmNkZWY' },
  ]);
  const registry = compileRegistry({ daily: tenantDaily });
  const signer = createQuerySigner(keyring, registry, {
    sessionTtl: 600,
    maxSessionTtl: 3600,
    publicTtl: 30 * 86400,
  });

  async function claimsOf(id: string) {
    const outcome = await verifyQueryId(id, keyring, {
      now: Math.floor(Date.now() / 1000),
      skewSeconds: 0,
      maxLength: 8192,
    });
    if (!outcome.ok) throw new Error(outcome.reason);
    return outcome.claims;
  }

  it('signs a session-bound id with the defaults applied', async () => {
    const now = 1_900_000_000;
    const signed = await signer.sign(
      { query: 'daily', params: { tenant: 'acme' }, subject: 'u1', range: '12w' },
      now,
    );
    expect(signed.expiresAt).toBe(new Date((now + 600) * 1000).toISOString());
    const outcome = await verifyQueryId(signed.id, keyring, {
      now,
      skewSeconds: 0,
      maxLength: 8192,
    });
    expect(outcome).toMatchObject({
      ok: true,
      claims: {
        q: 'daily',
        p: { tenant: 'acme', plan: 'free' },
        sub: 'u1',
        iat: now,
        exp: now + 600,
        r: '12w',
        jti: signed.jti,
      },
    });
  });

  it('signs public ids for 30 days by default, with an audience', async () => {
    const signed = await signer.sign({
      query: 'daily',
      params: { tenant: 'acme', plan: 'pro' },
      public: true,
      audience: 'https://blog.example.com',
    });
    const claims = await claimsOf(signed.id);
    expect(claims).toMatchObject({
      pub: true,
      aud: 'https://blog.example.com',
      p: { tenant: 'acme', plan: 'pro' },
    });
    expect(claims.exp - claims.iat).toBe(30 * 86400);
    expect(claims.sub).toBeUndefined();
  });

  it('carries an inline definition in d', async () => {
    const signed = await signer.sign({
      definition: { query: { graph_type: 'Single Value', start: '1 day ago', end: 'now' } },
      public: true,
      ttl: '2h',
    });
    const claims = await claimsOf(signed.id);
    expect(claims.q).toBeUndefined();
    expect(claims.d).toEqual({
      query: { graph_type: 'Single Value', start: '1 day ago', end: 'now' },
    });
    expect(claims.exp - claims.iat).toBe(7200);
  });

  it.each([
    [{ query: 'nope', public: true }, 'not_found', /no query named 'nope'/],
    [{ query: 'daily', params: { tenant: 'a' } }, 'bad_request', /either public or bound/],
    [
      { query: 'daily', params: { tenant: 'a' }, public: true, subject: 'u' },
      'bad_request',
      /either public or bound/,
    ],
    [{ query: 'daily', public: true }, 'forbidden', /'tenant' comes from the session/],
    [
      { query: 'daily', params: { tenant: 'a', plan: 'enterprise' }, public: true },
      'bad_request',
      /'plan' expected one of "free", "pro"/,
    ],
    [
      { query: 'daily', params: { tenant: 'a', role: 'admin' }, public: true },
      'bad_request',
      /'role' is not one this query takes/,
    ],
    [
      { query: 'daily', params: { tenant: 'a' }, subject: 'u', ttl: '2h' },
      'bad_request',
      /at most 3600 seconds/,
    ],
    [
      { query: 'daily', params: { tenant: 'a' }, subject: 'u', ttl: 'forever' },
      'bad_request',
      /ttl is not a lifetime/,
    ],
    [
      { query: 'daily', params: { tenant: 'a' }, subject: 'u', range: '1y' },
      'bad_request',
      /range '1y' is not one of 7d, 12w/,
    ],
    [
      { query: 'daily', params: { tenant: 'a' }, public: true, audience: 'blog.example.com' },
      'bad_request',
      /not an origin/,
    ],
    [
      {
        definition: { query: { graph_type: 'Samples', start: '1 day ago', end: 'now' } },
        public: true,
      },
      'bad_request',
      /Samples needs fields/,
    ],
  ])('refuses bad options (%#)', async (options, kind, message) => {
    const error = await signer.sign(options as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SignError);
    expect((error as SignError).kind).toBe(kind);
    expect((error as SignError).message).toMatch(message);
  });
});

describe('typed SQL parameters in definitions', () => {
  const sqlDefinition = (sql: string, params: Record<string, unknown>) => ({
    query: {
      graph_type: 'Single Value',
      sql_query: sql,
      label_column: 'l',
      value_column: 'v',
    },
    params,
  });

  it('compiles {name:Type} placeholders that name declared parameters, sampling by type', () => {
    const compiled = compileDefinition(
      sqlDefinition(
        "SELECT 'x' AS l, count(*) AS v FROM all_events WHERE JSONExtractString(json, 't') = {tenant:String} AND timestamp >= toUnixTimestamp({since:DateTime}) LIMIT {n:UInt32}",
        {
          tenant: { from: 'session' },
          since: { from: 'signer', type: 'number', default: 0 },
          n: { from: 'signer', type: 'number', default: 10 },
        },
      ),
      'sql',
    );
    expect([...compiled.sqlParams]).toEqual([
      ['tenant', 'String'],
      ['since', 'DateTime'],
      ['n', 'UInt32'],
    ]);
    const resolved = resolveQuery(compiled, { tenant: "o'hara", since: 1_700_000_000 }, undefined);
    expect(resolved.ok && resolved.value.body.parameters).toEqual({
      tenant: "o'hara",
      since: 1_700_000_000,
      n: 10,
    });
    // The values are part of the cache key: two tenants never share a cached result.
    const other = resolveQuery(compiled, { tenant: 'globex', since: 1_700_000_000 }, undefined);
    expect(resolved.ok && other.ok && resolved.value.cacheKey !== other.value.cacheKey).toBe(true);
  });

  it.each([
    [
      'an undeclared placeholder',
      'SELECT {tenant:String} AS l, 1 AS v',
      {},
      'names no declared parameter',
    ],
    [
      'an unknown type',
      'SELECT {tenant:Text} AS l, 1 AS v',
      { tenant: { from: 'session' } },
      'names no parameter type',
    ],
    [
      'a signer default of the wrong type',
      'SELECT 1 AS l, {n:Int64} AS v',
      { n: { from: 'signer', type: 'number', default: 1.5 } },
      'params.n.default expected an Int64',
    ],
    [
      'a string signer for an Int64',
      'SELECT 1 AS l, {n:Int64} AS v',
      { n: { from: 'signer' } },
      "parameter 'n': expected an Int64",
    ],
  ])('fails start-up for %s', (_, sql, params, message) => {
    expect(startupError({ q: sqlDefinition(sql, params) })).toContain(message);
  });

  it('refuses SQL given by a parameter, and parameters written in the query', () => {
    expect(
      startupError({
        q: {
          ...sqlDefinition('x', { s: { from: 'signer' } }),
          query: { graph_type: 'Table', sql_query: { $param: 's' } },
        },
      }),
    ).toContain('sql_query must be SQL text written in the definition');
    expect(
      startupError({
        q: {
          query: {
            graph_type: 'Table',
            sql_query: 'SELECT {t:String} AS t',
            parameters: { t: 'x' },
          },
          params: { t: { from: 'session' } },
        },
      }),
    ).toContain('SQL parameter values come from params');
  });

  it('refuses to sign a value that does not fit the SQL type', async () => {
    const registry = compileRegistry({
      q: sqlDefinition('SELECT 1 AS l, {n:UInt32} AS v', {
        n: { from: 'signer', type: 'number', default: 1 },
        tenant: { from: 'session' },
      }),
      s: sqlDefinition('SELECT 1 AS l, {tenant:Int64} AS v', { tenant: { from: 'session' } }),
    });
    const signer = createQuerySigner(
      new Keyring([{ kid: 'k', secret: 'c2lnbmVyLXRlc3Qta2V5LTAxMjM0NTY3ODlhYmNkZWY' }]),
      registry,
      {
        sessionTtl: 60,
        maxSessionTtl: 3600,
        publicTtl: 86_400,
      },
    );
    await expect(
      signer.sign({ query: 'q', subject: 'a', params: { tenant: 'acme', n: -1 } }),
    ).rejects.toMatchObject({ kind: 'bad_request', message: expect.stringContaining('UInt32') });
    await expect(
      signer.sign({ query: 's', subject: 'a', params: { tenant: 'acme' } }),
    ).rejects.toMatchObject({ kind: 'forbidden', message: expect.stringContaining('Int64') });
    expect(
      (await signer.sign({ query: 'q', subject: 'a', params: { tenant: 'acme', n: 5 } })).id,
    ).toMatch(/\./);
  });
});
