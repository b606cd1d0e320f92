import { describe, expect, it } from 'vitest';
import {
  bindSqlParameters,
  checkSqlParameterValue,
  findSqlPlaceholders,
  replaceSqlPlaceholders,
} from '../src/sql-parameters.ts';

const names = (sql: string) => {
  const found = findSqlPlaceholders(sql);
  if (!found.ok) throw new Error(found.error);
  return found.placeholders.map((p) => sql.slice(p.start, p.end));
};

describe('findSqlPlaceholders', () => {
  it('finds placeholders in code and nowhere else', () => {
    expect(
      names(`SELECT {a:String}, '{b:String}', 'it''s {c:String}', E'\\'{d:String}', {e:Int64}
        , "{f:String}", $$ {g:String} $$, $x$ {h:String} $x$, $1, {i:Date} -- {j:String}
        /* {k:String} /* nested */ {l:String} */ {m:DateTime}, {'n': 1}, {o:1}, e'{p:String}'`),
    ).toEqual(['{a:String}', '{e:Int64}', '{i:Date}', '{m:DateTime}']);
  });

  it('refuses an unknown type and one name with two types', () => {
    expect(findSqlPlaceholders('SELECT {a:string}')).toMatchObject({ ok: false });
    expect(findSqlPlaceholders('SELECT {a:String}, {a:Int64}')).toMatchObject({
      ok: false,
      error: "parameter 'a' is used as both String and Int64",
    });
  });

  it('replaces from the last to the first, so offsets stay right', () => {
    const sql = 'SELECT {a:String} || {b:String} || {a:String}';
    const found = findSqlPlaceholders(sql);
    expect(found.ok && replaceSqlPlaceholders(sql, found.placeholders, (p) => `$${p.name}`)).toBe(
      'SELECT $a || $b || $a',
    );
  });
});

describe('checkSqlParameterValue', () => {
  it.each([
    ['Int64', '-9223372036854775808', true],
    ['Int64', '9223372036854775808', false],
    ['Int64', 1.5, false],
    ['UInt32', '4294967295', true],
    ['UInt32', 4294967296, false],
    ['Float64', Number.POSITIVE_INFINITY, false],
    ['Date', '2024-02-29', true],
    ['Date', '2023-02-29', false],
    ['DateTime', '2024-03-05T14:00:00+01:00', true],
    ['DateTime', '2024-03-05 14:00:00', false],
    ['String', '\ud800', false],
    ['String', '😀', true],
  ] as const)('%s %j fits: %s', (type, value, fits) => {
    expect(checkSqlParameterValue(type, value).ok).toBe(fits);
  });

  it('normalizes: Int64 to digits, a DateTime instant to Unix seconds', () => {
    expect(checkSqlParameterValue('Int64', 42)).toEqual({ ok: true, value: '42' });
    expect(checkSqlParameterValue('DateTime', '2024-03-05T14:00:00+01:00')).toEqual({
      ok: true,
      value: Date.UTC(2024, 2, 5, 13) / 1000,
    });
  });
});

describe('bindSqlParameters', () => {
  it('needs a value for every placeholder and a placeholder for every value', () => {
    expect(bindSqlParameters('SELECT {a:String}', { a: 'x' })).toMatchObject({
      ok: true,
      value: { parameters: { a: { type: 'String', value: 'x' } } },
    });
    expect(bindSqlParameters('SELECT {a:String}', {})).toMatchObject({ ok: false });
    expect(bindSqlParameters('SELECT 1', { a: 'x' })).toMatchObject({ ok: false });
  });
});
