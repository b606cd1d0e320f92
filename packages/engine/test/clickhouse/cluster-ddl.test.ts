import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from '@clickhouse/client-web';
import { afterAll, expect, inject, test } from 'vitest';
import { clusterSchema } from '../../src/storage/clickhouse/clickhouse-cluster-schema.ts';

/**
 * The cluster DDL: every statement is accepted by ClickHouse's own parser (chdb has no Keeper,
 * cluster or macros to run it), `analytics-engine cluster-ddl` prints exactly what
 * `clusterSchema` writes, and the README's excerpt of it is true.
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

const BIN = join(import.meta.dirname, '../../bin/analytics-engine.mjs');

function clusterDdl(...args: string[]) {
  return spawnSync(process.execPath, [BIN, 'cluster-ddl', ...args], { encoding: 'utf8' });
}

test('`analytics-engine cluster-ddl` prints the statements for a workspace and cluster', () => {
  const run = clusterDdl('--workspace', 'acme', '--cluster', 'main');
  expect(run.status).toBe(0);
  expect(run.stdout).toBe(`${clusterSchema('analytics_acme', 'main').join(';\n\n')};\n`);
  expect(clusterDdl().stdout).toBe(`${statements.join(';\n\n')};\n`);
  const refused = clusterDdl('--workspace', 'a;b');
  expect(refused.status).toBe(2);
  expect(refused.stdout).toBe('');
  expect(refused.stderr).toBe(
    "analytics-engine cluster-ddl: --workspace 'a;b' must be letters, digits, '_' or '-' (analytics-engine cluster-ddl --help)\n",
  );
});

test("the README's excerpt of the cluster DDL is clusterSchema's", () => {
  const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');
  expect(readme).toContain(`${statements[1]};`);
});
