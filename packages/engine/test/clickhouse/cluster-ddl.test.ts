import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from '@clickhouse/client-web';
import { afterAll, expect, inject, test } from 'vitest';
import { clusterSchema } from '../../src/storage/clickhouse/clickhouse-cluster-schema.ts';

/**
 * The cluster DDL the README documents: every statement is accepted by ClickHouse's own parser
 * (chdb has no Keeper, cluster or macros to run it), and the README shows exactly what
 * `clusterSchema` writes.
 */

const client = createClient({
  url: inject('clickhouseUrl'),
  password: inject('clickhousePassword'),
});
afterAll(() => client.close());

const statements = clusterSchema('analytics_default');

test('ClickHouse parses every statement, as the statement kind it is', async () => {
  for (const statement of statements) {
    const result = await client.query({
      query: 'SELECT formatQuery({q:String}) AS f',
      query_params: { q: statement },
      format: 'JSONEachRow',
    });
    const [row] = await result.json<{ f: string }>();
    expect(row?.f).toMatch(/^CREATE (DATABASE|TABLE) IF NOT EXISTS analytics_default\b/);
    expect(row?.f).toContain('ON CLUSTER `{cluster}`');
  }
});

test('a statement ClickHouse cannot parse is refused (the check above can fail)', async () => {
  await expect(
    client.query({
      query: 'SELECT formatQuery({q:String}) AS f',
      query_params: { q: `${statements[1]} ORDER BY` },
      format: 'JSONEachRow',
    }),
  ).rejects.toThrow(/Syntax error/);
});

test("the README's cluster DDL is clusterSchema's, statement for statement", () => {
  const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');
  expect(readme).toContain(`${statements.join(';\n\n')};`);
});
