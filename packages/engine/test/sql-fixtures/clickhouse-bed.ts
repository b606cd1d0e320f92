import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Envelope, SqlQuery } from '@analytics-chart/protocol';
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client-web';
import { inject } from 'vitest';
import { EngineError, QUERY_TIMED_OUT } from '../../src/engine-error.ts';
import { createEngine } from '../../src/index.ts';
import { runClickHouseSql } from '../../src/sql-mode/clickhouse/clickhouse-sql-mode.ts';
import { limitFailure } from '../../src/storage/clickhouse/clickhouse-errors.ts';
import { driverOptions } from '../helpers/driver.ts';
import { CANARIES, EVENTS, type SqlTestBed, unix } from './workspaces.ts';

/**
 * The SQL-mode test bed on ClickHouse: workspace A holds the fixture events and workspace B a
 * canary, both written through a ClickHouse engine's ingest (so the views SQL mode reads are the
 * engine's own), and queries run through the driver's SQL mode against A's database.
 */

/** Workspace A on ClickHouse: what `answer()` runs SQL-mode queries with. */
export interface ClickHouseTestWorkspace {
  readonly driver: 'clickhouse';
  run(query: SqlQuery, options: { timeoutMs?: number }): Promise<Envelope>;
}

export function isClickHouseWorkspace(w: unknown): w is ClickHouseTestWorkspace {
  return (w as { driver?: unknown }).driver === 'clickhouse';
}

/** Opens workspaces A and B in ClickHouse (see `openSqlTestBed`). */
export async function openClickHouseSqlTestBed(): Promise<SqlTestBed> {
  const dir = mkdtempSync(join(tmpdir(), 'sql-mode-ch-'));
  const canaryFile = join(dir, 'secret.csv');
  writeFileSync(canaryFile, `secret\n${CANARIES.file}\n`);
  const options = driverOptions();
  const clickhouse = options.clickhouse as NonNullable<typeof options.clickhouse>;
  const engine = await createEngine({
    dataDir: dir,
    workspaces: { a: 'key-a', b: 'key-b' },
    logError: () => undefined,
    ...options,
  });
  try {
    for (const event of EVENTS) {
      const answer = await engine.log({
        api_key: 'key-a',
        collection: event.collection,
        timestamp: unix(event.at),
        json: event.json,
      });
      if (answer.status !== 200) throw new Error(`fixture ingest: ${JSON.stringify(answer.body)}`);
    }
    await engine.log({
      api_key: 'key-b',
      timestamp: unix('2024-03-01T00:00:00Z'),
      json: { secret: CANARIES.otherWorkspace },
    });
  } finally {
    await engine.close();
  }
  const database = `${clickhouse.databasePrefix}a`;
  const client: ClickHouseClient = createClient({
    url: inject('clickhouseUrl'),
    password: inject('clickhousePassword'),
    database,
    log: { level: ClickHouseLogLevel.OFF },
  });
  const workspace: ClickHouseTestWorkspace = {
    driver: 'clickhouse',
    async run(query, { timeoutMs = 10_000 }) {
      try {
        return await runClickHouseSql(query, {
          client,
          database,
          now: 0,
          timeoutMs,
          memoryLimit: '512MB',
        });
      } catch (error) {
        // As the engine's front answers ClickHouse's time limit.
        throw limitFailure(error) === 'timed-out' ? new EngineError(504, QUERY_TIMED_OUT) : error;
      }
    },
  };
  return {
    dir,
    // biome-ignore lint/suspicious/noExplicitAny: answer() tells the two kinds of workspace apart
    workspace: workspace as any,
    // biome-ignore lint/suspicious/noExplicitAny: workspace B is reached only through A's SQL
    other: undefined as any,
    canaryFile,
    close() {
      void client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
