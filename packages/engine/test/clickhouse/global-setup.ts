import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startChdbHttpServer } from './chdb-http-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The storage driver the conformance suites run against (the vitest project's choice). */
    driver: 'duckdb' | 'clickhouse';
    /** The URL of the one chdb-backed ClickHouse HTTP server all ClickHouse tests share. */
    clickhouseUrl: string;
    /** Its only user's password (the user is `default`). */
    clickhousePassword: string;
  }
}

/**
 * Starts one ClickHouse (chdb) for every ClickHouse test file: chdb allows one data directory per
 * process, and loading its library per test file would cost each file the start-up.
 */
export default async function setup(project: TestProject) {
  const dir = await mkdtemp(join(tmpdir(), 'engine-chdb-'));
  const password = 'test-password';
  const server = await startChdbHttpServer({ path: join(dir, 'data'), password });
  project.provide('clickhouseUrl', server.url);
  project.provide('clickhousePassword', password);
  return async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  };
}
