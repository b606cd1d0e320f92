/**
 * fast-check arbitraries for hostile request bodies. Values are kept as a small tree serialised
 * by hand, so that a body can hold what `JSON.stringify` cannot write: `__proto__` as an own key,
 * duplicate keys, number literals beyond a double (`1e400`, 40-digit integers), lone surrogates.
 */
import fc from 'fast-check';

/** A JSON-ish value: plain JSON values, objects as ordered entries, and raw literals. */
export type Hostile =
  | string
  | number
  | boolean
  | null
  | Hostile[]
  | { obj: Array<[string, Hostile]> }
  | { raw: string };

/** Serialises a {@link Hostile} value to JSON text (raw literals as they are). */
export function toJsonText(value: Hostile): string {
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if ('raw' in value) return value.raw;
  return `{${value.obj.map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`).join(',')}}`;
}

/** A plain JS value (objects, arrays, primitives) as a {@link Hostile} tree. */
export function fromPlain(value: unknown): Hostile {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return value;
  }
  if (Array.isArray(value)) return value.map(fromPlain);
  return {
    obj: Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, fromPlain(v)]),
  };
}

/** Keys that pollute or shadow prototypes when code copies objects carelessly. */
export const PROTOTYPE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
] as const;

/** Strings that parse as numbers somewhere, or look like they should. */
export const NUMBER_LIKE_STRINGS = [
  'NaN',
  'Infinity',
  '-Infinity',
  '1e999',
  '-0',
  '0x1F',
  '0b101',
  '  42  ',
  '1_000',
  '١٢٣',
  '９',
  '1e-400',
  '9007199254740993',
  '253402300800',
  '-1',
  '',
  ' ',
  'null',
  'undefined',
  'true',
  '[object Object]',
] as const;

/** Injection-shaped strings: SQL, paths, templates, markup, control characters. */
export const INJECTION_STRINGS = [
  "' OR 1=1 --",
  '"; DROP TABLE all_events; --',
  'all_events; SELECT * FROM duckdb_settings()',
  "SELECT * FROM read_csv('/etc/passwd')",
  "COPY all_events TO '/tmp/x.csv'",
  "ATTACH DATABASE '/tmp/x.duckdb' AS x",
  '../../../../etc/passwd',
  '..\\..\\windows\\win.ini',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, on purpose
  '${process.env.ANALYTICS_API_KEY}',
  '{{constructor.constructor("return process")()}}',
  '<script>alert(1)</script>',
  '\u0000',
  'a\u0000b',
  '\r\nX-Injected: 1',
  '\u202e\u0041',
  '\ud800',
  '\udfff\ud800',
  '%00',
  '%ff%fe',
  'collections."all_events"',
  '_engine.events_1',
] as const;

/** Number literals that a double cannot hold or that sit on edges. */
export const GIANT_NUMBER_LITERALS = [
  '1e400',
  '-1e400',
  '123456789012345678901234567890123456789',
  '1.7976931348623157e308',
  '5e-324',
  '-0',
  '0.1e-999',
  '253402300799.999999',
  '9007199254740993',
] as const;

/** Any string, with the hostile families above heavily represented. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string(), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary' }), weight: 2 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }), weight: 1 },
  { arbitrary: fc.constantFrom(...NUMBER_LIKE_STRINGS), weight: 2 },
  { arbitrary: fc.constantFrom(...INJECTION_STRINGS), weight: 2 },
  { arbitrary: fc.constantFrom(...PROTOTYPE_KEYS), weight: 1 },
  {
    arbitrary: fc
      .tuple(
        fc.constantFrom('x', 'é', '\u{1F600}', '"', '\\'),
        fc.constantFrom(1_000, 70_000, 300_000),
      )
      .map(([unit, n]) => unit.repeat(n)),
    weight: 1,
  },
);

/** Numbers on every edge, and literals beyond a double. */
export const hostileNumber: fc.Arbitrary<Hostile> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -1, 1e308, -1e308, 2 ** 53 + 2, 5e-324, 253_402_300_800, 1.5, 1e21),
  fc.constantFrom(...GIANT_NUMBER_LITERALS).map((raw): Hostile => ({ raw })),
);

/** A key: ordinary, prototype-polluting, or hostile. */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...PROTOTYPE_KEYS), weight: 2 },
  { arbitrary: fc.string({ maxLength: 12 }), weight: 3 },
  { arbitrary: hostileString, weight: 1 },
);

/** Any value: nested arrays and objects (prototype keys, duplicates) of hostile leaves. */
export const hostileValue: fc.Arbitrary<Hostile> = fc.letrec<{ value: Hostile }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { arbitrary: hostileString, weight: 4 },
    { arbitrary: hostileNumber, weight: 3 },
    { arbitrary: fc.constantFrom<Hostile>(true, false, null), weight: 2 },
    { arbitrary: fc.array(tie('value'), { maxLength: 5 }), weight: 1 },
    {
      arbitrary: fc
        .array(fc.tuple(hostileKey, tie('value')), { maxLength: 5 })
        .map((obj): Hostile => ({ obj })),
      weight: 1,
    },
  ),
})).value;

/** Nesting far past any sane depth, as text (arrays, objects, or both). */
export function deeplyNested(depth: number, kind: 'array' | 'object' | 'mixed'): string {
  if (kind === 'array') return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
  if (kind === 'object') return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  return `${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}`;
}

/** Replaces, drops or keeps each top-level key of a valid body, and may add hostile keys. */
export function mutatedBody(template: Record<string, unknown>): fc.Arbitrary<Hostile> {
  const DROP = Symbol('drop');
  const entries = Object.entries(template);
  return fc
    .tuple(
      fc.tuple(
        ...entries.map(([, v]) =>
          fc.oneof(
            { arbitrary: fc.constant<Hostile | typeof DROP>(fromPlain(v)), weight: 5 },
            { arbitrary: hostileValue as fc.Arbitrary<Hostile | typeof DROP>, weight: 2 },
            { arbitrary: fc.constant<Hostile | typeof DROP>(DROP), weight: 1 },
          ),
        ),
      ),
      fc.array(fc.tuple(hostileKey, hostileValue), { maxLength: 2 }),
      fc.boolean(),
    )
    .map(([values, extra, extraFirst]): Hostile => {
      const kept: Array<[string, Hostile]> = [];
      values.forEach((value, i) => {
        if (value !== DROP) kept.push([entries[i]?.[0] ?? '', value as Hostile]);
      });
      return { obj: extraFirst ? [...extra, ...kept] : [...kept, ...extra] };
    });
}

/** Any bytes, some of them invalid UTF-8, some almost JSON. */
export const hostileBytes: fc.Arbitrary<Buffer> = fc.oneof(
  fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
  fc
    .tuple(
      fc.constantFrom('{"a":"', '{"api_key":"', '["', '"'),
      fc.uint8Array({ minLength: 1, maxLength: 40 }),
    )
    .map(([prefix, b]) => Buffer.concat([Buffer.from(prefix), Buffer.from(b), Buffer.from('"}')])),
  fc.constantFrom(
    Buffer.from([0xff, 0xfe, 0xfd]),
    Buffer.from([0xc3, 0x28]),
    Buffer.from([0xed, 0xa0, 0x80]),
    Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]),
    Buffer.from('{"a":1'),
    Buffer.from('{"a":1}}'),
    Buffer.from('\u0000'),
    Buffer.from(''),
  ),
);
