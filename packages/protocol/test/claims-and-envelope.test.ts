import { describe, expect, it } from 'vitest';
import {
  andFilters,
  describeZodError,
  envelopeSchema,
  type FilterGroups,
  signedQueryClaimsSchema,
  valueKey,
} from '../src/index.ts';

describe('signed query claims', () => {
  const base = { exp: 2000, iat: 1000, jti: 'abc' };

  it('accepts a session-bound registry query and a public inline one', () => {
    expect(
      signedQueryClaimsSchema.safeParse({ ...base, q: 'signups', sub: 'u1', p: { tenant: 'acme' } })
        .success,
    ).toBe(true);
    expect(
      signedQueryClaimsSchema.safeParse({
        ...base,
        d: { query: {} },
        pub: true,
        aud: ['https://a.example'],
      }).success,
    ).toBe(true);
  });

  it.each([
    [
      { ...base, sub: 'u1' },
      'a signed query names a registry query (q) or carries a definition (d), not both',
    ],
    [
      { ...base, q: 'a', d: {}, sub: 'u1' },
      'a signed query names a registry query (q) or carries a definition (d), not both',
    ],
    [{ ...base, q: 'a' }, 'a signed query is either public (pub) or bound to a session (sub)'],
  ])('refuses %j', (claims, message) => {
    const parsed = signedQueryClaimsSchema.safeParse(claims);
    expect(parsed.success).toBe(false);
    if (!parsed.success)
      expect(describeZodError(parsed.error, 'claims')).toBe(`claims: ${message}`);
  });

  it('refuses a params object carrying objects', () => {
    const parsed = signedQueryClaimsSchema.safeParse({
      ...base,
      q: 'a',
      sub: 'u',
      p: { tenant: { $ne: 1 } },
    });
    expect(parsed.success).toBe(false);
    if (!parsed.success)
      expect(describeZodError(parsed.error)).toBe(
        'p.tenant: expected a string, number or boolean parameter',
      );
  });
});

describe('envelope', () => {
  it('defaults metadata and keeps its keys', () => {
    expect(envelopeSchema.parse({ result: [] })).toEqual({ result: [], metadata: {} });
    expect(
      envelopeSchema.parse({
        result: [{ timestamp: '2024-03-05', Count: 3 }],
        metadata: { granularity: 'Day', combined: 3 },
      }),
    ).toEqual({
      result: [{ timestamp: '2024-03-05', Count: 3 }],
      metadata: { granularity: 'Day', combined: 3 },
    });
  });

  it('refuses a body without result', () => {
    const parsed = envelopeSchema.safeParse({ error: 'nope' });
    expect(parsed.success).toBe(false);
    if (!parsed.success)
      expect(describeZodError(parsed.error, 'envelope')).toBe(
        'result: expected array, received undefined',
      );
  });
});

describe('value keys', () => {
  it.each([
    ['Count', null, 'Count'],
    ['Count', 'price', 'Count'],
    ['Sum', 'price', 'Sum(price)'],
    ['Avg', 'cart.total', 'Avg(cart.total)'],
    ['P95', 'price', 'P95(price)'],
  ] as const)('%s of %s is %s', (aggregation, metric, key) => {
    expect(valueKey(aggregation, metric)).toBe(key);
  });
});

describe('andFilters', () => {
  const a: FilterGroups = [[['x', '=', 1]], [['y', '=', 2]]];
  const b: FilterGroups = [[['z', '>', 3]]];
  it('distributes AND over the OR groups', () => {
    expect(andFilters(a, b)).toEqual([
      [
        ['x', '=', 1],
        ['z', '>', 3],
      ],
      [
        ['y', '=', 2],
        ['z', '>', 3],
      ],
    ]);
  });
  it('treats [] as true', () => {
    expect(andFilters([], b)).toBe(b);
    expect(andFilters(a, [])).toBe(a);
  });
});

describe('describeZodError never echoes kilobytes', () => {
  it('clips long keys and messages of strict objects', async () => {
    const z = await import('zod');
    const long = 'k'.repeat(1000);
    const strict = z.strictObject({ query: z.string() });
    const unknownKey = strict.safeParse({ query: 'x', [long]: 1 });
    const nested = z
      .object({ [long]: z.object({ inner: z.number() }) })
      .safeParse({ [long]: { inner: 'x' } });
    expect(unknownKey.success || nested.success).toBe(false);
    if (!unknownKey.success) {
      const sentence = describeZodError(unknownKey.error);
      expect(sentence.length).toBeLessThanOrEqual(240);
      expect(sentence).toMatch(/^request body: Unrecognized key: "k+\.\.\.$/);
    }
    if (!nested.success) {
      const sentence = describeZodError(nested.error);
      expect(sentence).toBe(`${'k'.repeat(37)}....inner: expected number, received string`);
    }
  });
});
