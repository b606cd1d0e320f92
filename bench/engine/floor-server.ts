/**
 * The floor served over HTTP: a child process of `pnpm bench engine` that answers
 * `POST /` `{"sql": "…"}` with the statement's rows as JSON, from a copy of the floor's table,
 * on the same server the engine runs on (Hono on `@hono/node-server`, DuckDB configured as the
 * floor's). It does nothing else: no validation, no plan, no shaping. Timed from the same client
 * as the engine, it tells what any server pays to answer the floor's statement over HTTP on this
 * machine (the round trip, the hand-offs between the client, the server and DuckDB's threads),
 * which the floor run inside the benchmark process does not. Local and trusted: it runs whatever
 * SQL it is sent.
 *
 * `node --import tsx floor-server.ts <database file>`; prints `listening on <url>` when ready.
 */
import type { AddressInfo } from 'node:net';
import { DuckDBInstance, STORAGE_VERSION } from '@analytics-chart/engine/internals';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const path = process.argv[2];
if (!path) throw new Error('floor-server: a database file is required');

const db = await DuckDBInstance.create(path, {
  threads: '2',
  memory_limit: '1GB',
  storage_compatibility_version: STORAGE_VERSION,
});
const conn = await db.connect();

// Read as the engine reads: the materialized result's chunks, synchronously (the reader's
// asynchronous fetches would add thread-pool round trips the engine does not make).
const app = new Hono().post('/', async (c) => {
  const { sql } = await c.req.json<{ sql: string }>();
  const result = await conn.run(sql);
  const rows: unknown[] = [];
  for (let i = 0; i < result.chunkCount; i++) rows.push(...result.getChunk(i).getRows());
  return c.body(
    JSON.stringify(rows, (_, v) => (typeof v === 'bigint' ? Number(v) : v)),
    200,
    {
      'Content-Type': 'application/json',
    },
  );
});

const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
  process.stdout.write(`listening on http://127.0.0.1:${info.port}\n`);
});
process.once('SIGTERM', () => {
  server.close();
  conn.closeSync();
  db.closeSync();
});
