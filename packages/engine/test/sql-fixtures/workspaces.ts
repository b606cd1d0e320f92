import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseQueryRequest, type SqlQuery } from '@analytics-chart/protocol';
import type { SqlWorkspace } from '../../src/sql-mode/duckdb/index.ts';
import {
  openWorkspaceInstance,
  type WorkspaceInstance,
} from '../../src/storage/duckdb/db-config.ts';
import { ON_CLICKHOUSE } from '../helpers/driver.ts';
import { openClickHouseSqlTestBed } from './clickhouse-bed.ts';

/**
 * Real DuckDB workspaces for SQL-mode tests: each is a database file in a temporary directory,
 * opened with the engine's lock-down configuration, holding a storage-like table of events and
 * one view per collection (the relations the storage layer hands SQL mode). A second workspace
 * and a file beside them hold canary strings that no answer may ever contain.
 */

/** One fixture event: when it happened (UTC ISO) and its payload. */
export interface FixtureEvent {
  collection: string;
  at: string;
  json: Record<string, unknown>;
}

/** Unix seconds of a UTC ISO instant. */
export function unix(iso: string): number {
  return Math.floor(Date.parse(iso) / 1000);
}

/** The engine's "now" in the tests: 2024-03-09 16:00:00 UTC. */
export const NOW = unix('2024-03-09T16:00:00Z');

/** The events of workspace A, hand-picked so that zones and windows matter. */
export const EVENTS: FixtureEvent[] = [
  {
    collection: 'all_events',
    at: '2024-03-01T10:15:00Z',
    json: { action_id: 'signup', amount: 10, user: 'u1' },
  },
  {
    collection: 'all_events',
    at: '2024-03-01T10:45:00Z',
    json: { action_id: 'click', amount: 2.5, user: 'u1' },
  },
  {
    collection: 'all_events',
    at: '2024-03-01T23:30:00Z',
    json: { action_id: 'click', amount: '4', user: 'u2' },
  },
  {
    collection: 'all_events',
    at: '2024-03-02T00:10:00Z',
    json: { action_id: 'purchase', amount: 30, user: 'u2', paid: true },
  },
  {
    collection: 'all_events',
    at: '2024-03-05T12:00:00Z',
    json: { action_id: 'click', user: 'u3' },
  },
  {
    collection: 'all_events',
    at: '2024-03-09T09:00:00Z',
    json: { action_id: 'signup', amount: 1, user: 'u3' },
  },
  {
    collection: 'all_events',
    at: '2024-01-15T08:00:00Z',
    json: { action_id: 'click', user: 'u1' },
  },
  {
    collection: 'all_events',
    at: '2024-03-09T15:59:59Z',
    json: { action_id: 'purchase', amount: 12.5, user: 'u1', paid: false },
  },
  { collection: 'signups', at: '2024-03-03T12:00:00Z', json: { plan: 'pro', user: 'u7' } },
  { collection: 'signups', at: '2024-03-04T12:00:00Z', json: { plan: 'free', user: 'u8' } },
  { collection: 'Mixed Case', at: '2024-03-04T12:00:00Z', json: { x: 1 } },
  { collection: 'odd "quoted" name', at: '2024-03-04T12:00:00Z', json: { x: 2 } },
];

/** Strings placed where no SQL of workspace A may reach; none may appear in any answer. */
export const CANARIES = {
  otherWorkspace: 'CANARY-OTHER-WORKSPACE-7f3a',
  internalTable: 'CANARY-INTERNAL-TABLE-2c4e',
  file: 'CANARY-FILE-CONTENT-91bd',
  environment: 'CANARY-ENV-KEY-55aa',
} as const;

/** A workspace database with its SqlWorkspace view. */
export interface TestWorkspace extends SqlWorkspace {
  instance: WorkspaceInstance;
  path: string;
}

/** Everything a SQL-mode test needs; call `close()` in `afterAll`. */
export interface SqlTestBed {
  dir: string;
  workspace: TestWorkspace;
  other: TestWorkspace;
  canaryFile: string;
  close(): void;
}

async function openWorkspace(path: string, events: FixtureEvent[], internal?: string) {
  const instance = await openWorkspaceInstance(path, { memoryLimit: '512MB' });
  const setup = await instance.connect();
  await setup.run(`CREATE SCHEMA store;
    CREATE TABLE store.events (collection VARCHAR, "timestamp" BIGINT, "json" VARCHAR)`);
  const appender = await setup.createAppender('events', 'store');
  for (const event of events) {
    appender.appendVarchar(event.collection);
    appender.appendBigInt(BigInt(unix(event.at)));
    appender.appendVarchar(JSON.stringify(event.json));
    appender.endRow();
  }
  appender.closeSync();
  if (internal) {
    await setup.run('CREATE TABLE store.internal (secret VARCHAR)');
    await setup.run('INSERT INTO store.internal VALUES ($1)', [internal]);
  }
  const names = [...new Set(events.map((e) => e.collection))];
  const collections = names.map((name, i) => ({ name, relation: `"store"."c${i}"` }));
  for (const [i, name] of names.entries()) {
    const escaped = name.replaceAll("'", "''");
    await setup.run(
      `CREATE VIEW store.c${i} AS SELECT "timestamp", "json" FROM store.events WHERE collection = '${escaped}'`,
    );
  }
  setup.closeSync();
  const workspace: TestWorkspace = {
    instance,
    path,
    connect: () => instance.connect(),
    collections: async () => collections,
  };
  return workspace;
}

/**
 * Opens workspace A (the fixture events), workspace B (a canary) and a canary file, on this
 * run's driver (see `test/helpers/driver.ts`).
 */
export async function openSqlTestBed(): Promise<SqlTestBed> {
  if (ON_CLICKHOUSE) return openClickHouseSqlTestBed();
  const dir = mkdtempSync(join(tmpdir(), 'sql-mode-'));
  const canaryFile = join(dir, 'secret.csv');
  writeFileSync(canaryFile, `secret\n${CANARIES.file}\n`);
  const workspace = await openWorkspace(join(dir, 'a.duckdb'), EVENTS, CANARIES.internalTable);
  const other = await openWorkspace(join(dir, 'b.duckdb'), [
    {
      collection: 'all_events',
      at: '2024-03-01T00:00:00Z',
      json: { secret: CANARIES.otherWorkspace },
    },
  ]);
  return {
    dir,
    workspace,
    other,
    canaryFile,
    close() {
      workspace.instance.closeSync();
      other.instance.closeSync();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A SQL query as the protocol parses it from a request body (defaults applied). */
export function sqlQuery(body: Record<string, unknown>): SqlQuery {
  const parsed = parseQueryRequest(body);
  if (!parsed.ok) throw new Error(`fixture request is invalid: ${parsed.error}`);
  if (!('sql_query' in parsed.value)) throw new Error('fixture request is not SQL mode');
  return parsed.value;
}
