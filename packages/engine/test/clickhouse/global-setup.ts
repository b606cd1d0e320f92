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

const password = 'test-password';

/** The one server of this process, shared by every project that runs ClickHouse tests. */
interface Shared {
  url: Promise<string>;
  projects: number;
  close(): Promise<void>;
}
const SHARED = Symbol.for('analytics-engine.test.chdb-server');
const holder = globalThis as { [SHARED]?: Shared };

/**
 * Starts one ClickHouse (chdb) for every ClickHouse test file of every project (`clickhouse`,
 * `clickhouse-rollups`): chdb allows one data directory per process, and loading its library per
 * test file would cost each file the start-up. The last project to finish stops it.
 */
export default async function setup(project: TestProject) {
  let shared = holder[SHARED];
  if (!shared) {
    const started = (async () => {
      const dir = await mkdtemp(join(tmpdir(), 'engine-chdb-'));
      const server = await startChdbHttpServer({ path: join(dir, 'data'), password });
      return { dir, server };
    })();
    shared = {
      url: started.then(({ server }) => server.url),
      projects: 0,
      close: async () => {
        const { dir, server } = await started;
        await server.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
    holder[SHARED] = shared;
  }
  const server = shared;
  server.projects++;
  project.provide('clickhouseUrl', await server.url);
  project.provide('clickhousePassword', password);
  return async () => {
    if (--server.projects > 0) return;
    delete holder[SHARED];
    await server.close();
  };
}
