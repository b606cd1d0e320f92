/**
 * ClickHouse over HTTP for `pnpm bench engine`: a child process serving ClickHouse's HTTP
 * interface from ClickHouse as a library (`chdb`), the server the engine's own ClickHouse tests
 * run against (`packages/engine/test/clickhouse/chdb-http-server.ts`). It is imported from the
 * engine's tests rather than the package because it is a test tool: it needs `chdb`, which the
 * published engine does not depend on. chdb holds one data directory per process, so it runs
 * apart from the benchmark's in-process chdb; `engine serve --clickhouse` and the hand-written
 * statements both reach it over HTTP.
 *
 * `node --import tsx clickhouse-server.ts <data directory>`; prints `listening on <url>` when ready.
 */
import { startChdbHttpServer } from '../../packages/engine/test/clickhouse/chdb-http-server.ts';

const path = process.argv[2];
if (!path) throw new Error('clickhouse-server: a data directory is required');

const server = await startChdbHttpServer({ path });
process.stdout.write(`listening on ${server.url}\n`);
process.once('SIGTERM', () => {
  void server.close().then(() => process.exit(0));
});
