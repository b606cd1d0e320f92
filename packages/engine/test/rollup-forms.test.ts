import { DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { canonicalNumberTexts } from '../src/ingest/number-texts.ts';
import type { CollectionEntry } from '../src/storage/duckdb/catalog.ts';
import { forEachRollupRow } from '../src/storage/duckdb/rollup-forms.ts';
import { RollupLedger, returningSql } from '../src/storage/duckdb/rollups.ts';
import type { EventRecord } from '../src/storage/ingest-batch.ts';

/**
 * The rollup rows ingest computes in JavaScript (`storage/duckdb/rollup-forms.ts`) are the rows
 * DuckDB's own SQL reads back from the inserted events (`returningSql`), value for value, for
 * every record JavaScript claims to be sure of; and it is sure of the usual events.
 */

const ledger = new RollupLedger({ keys: ['event', 'plan'], sums: ['price', 'plan'] });
const entry = { rollup: ledger } as unknown as CollectionEntry;
let db: DuckDBInstance;

/** Ingest's rows of `records`, each copied out of the array it is visited in; undefined where unsure. */
function rollupRowsOf(records: readonly EventRecord[]): unknown[][] | undefined {
  const rows: unknown[][] = [];
  return forEachRollupRow(ledger, records, (row) => rows.push([...row])) ? rows : undefined;
}

beforeAll(async () => {
  db = await DuckDBInstance.create(':memory:');
});
afterAll(() => db?.closeSync());

/** The rows DuckDB's RETURNING list gives for `records`, in order. */
async function duckdbRows(records: readonly EventRecord[]): Promise<unknown[][]> {
  const conn = await db.connect();
  try {
    await conn.run('CREATE OR REPLACE TABLE t (i INTEGER, "timestamp" BIGINT, "json" JSON)');
    const appender = await conn.createAppender('t');
    records.forEach((r, i) => {
      appender.appendInteger(i);
      appender.appendBigInt(BigInt(r.timestamp));
      appender.appendVarchar(r.payload);
      appender.endRow();
    });
    appender.closeSync();
    const reader = await conn.runAndReadAll(`SELECT ${returningSql(entry)} FROM t ORDER BY i`);
    return reader.getRows().map((row) => row.map((v) => (typeof v === 'bigint' ? Number(v) : v)));
  } finally {
    conn.closeSync();
  }
}

const number = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.constantFrom(0, -0, 1e21, 1e-7, 5e-324, 2 ** 53 + 2, 2 ** 64, 1.7976931348623157e308, 0.1),
);
const text = fc.oneof(
  fc.string(),
  fc.constantFrom('pro', 'free', '', ' 42 ', '1e3', '+.5', '-0', '{"a":1}', '[1]', 'true', 'é😀'),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('a\u0000b', '\u0000'),
  // Quotes, backslashes and brackets that a scan of the text must not take for structure.
  fc.constantFrom('\\', '"', '\\"', 'x\\', '}","event":"x', '[{', 'a\nb', '\u001f'),
  number.map(String),
);
const value = fc.oneof(
  { weight: 3, arbitrary: text },
  { weight: 3, arbitrary: number },
  fc.boolean(),
  fc.constant(null),
  fc.constant({ nested: 1 }),
  fc.array(fc.oneof(number, text), { maxLength: 3 }),
  // Nested objects holding the rolled-up names, which only top-level keys count for.
  fc.dictionary(fc.constantFrom('event', 'plan', 'price'), fc.oneof(text, number)),
  fc.array(fc.dictionary(fc.constantFrom('event', 'price'), text), { maxLength: 2 }),
);
const event = fc.record(
  { event: value, plan: value, price: value, other: value, 'e"vent\\': value },
  { requiredKeys: [] },
);
/** An event as a request may send it: compact, or a text with other spacing or number spellings. */
const record = fc
  .tuple(
    event,
    fc.constantFrom('compact', 'spaced', 'exponents', 'long digits'),
    fc.integer({ min: 0, max: 1e9 }),
  )
  .map(([json, spelling, timestamp]): EventRecord => {
    const compact = JSON.stringify(json);
    if (spelling === 'compact') return { timestamp, payload: compact, canonical: true };
    const sent =
      spelling === 'spaced'
        ? JSON.stringify(json, null, 1)
        : spelling === 'exponents'
          ? compact.replace(/(\d)e\+/g, '$1E+').replace(/:(\d+)([,}])/g, ':$1.0$2')
          : // Integers a double cannot hold, whose digits the stored text keeps.
            `{"event":9007199254740993,"price":-12345678901234567891${compact.slice(1, -1) ? `,${compact.slice(1)}` : '}'}`;
    return { timestamp, payload: canonicalNumberTexts(sent) };
  });

test('JavaScript rollup rows equal DuckDB\u2019s for every record JavaScript is sure of', async () => {
  let sure = 0;
  let total = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(record, { minLength: 1, maxLength: 40 }), async (records) => {
      const expected = await duckdbRows(records);
      records.forEach((r, i) => {
        total++;
        const mine = rollupRowsOf([r]);
        if (mine === undefined) return;
        sure++;
        expect(mine[0], r.payload).toEqual(expected[i]);
      });
      // A batch is sure exactly when each of its records is, and then row for row the same.
      const all = rollupRowsOf(records);
      const each = records.map((r) => rollupRowsOf([r]));
      if (each.every((x) => x !== undefined)) expect(all).toEqual(expected);
      else expect(all).toBeUndefined();
    }),
    { numRuns: 150, seed: 37 },
  );
  // Not vacuous: most generated records (which mix in arrays, numeric texts and other
  // spellings on purpose) are computed in JavaScript.
  expect(sure / total).toBeGreaterThan(0.25);
});

test('the usual events are all computed in JavaScript', () => {
  const records: EventRecord[] = Array.from({ length: 500 }, (_, i) => ({
    timestamp: 1_700_000_000 + i,
    payload: JSON.stringify({
      event: ['view', 'signup', 'purchase'][i % 3],
      plan: i % 5 ? 'pro' : 'free',
      price: (i * 7.31) % 100,
      user: `u${i}`,
    }),
    canonical: i % 2 === 0,
  }));
  // Nested values before the rolled-up keys, holding their names, brackets and quotes.
  records.push({
    timestamp: 1_700_000_500,
    payload: JSON.stringify({
      other: [{ event: 'x' }, { a: { b: [1, '"]}'] } }],
      w: { plan: '}', price: 1 },
      event: 'sign"up\\',
      plan: 'pro',
      price: 5,
    }),
    canonical: true,
  });
  const rows = rollupRowsOf(records);
  expect(rows).toHaveLength(501);
  expect(rows?.[1]).toEqual([1_700_000_001, 'signup', 'pro', 7.31, null]);
  expect(rows?.[500]).toEqual([1_700_000_500, 'sign"up\\', 'pro', 5, null]);
});
