import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { createEngine, type EngineResponse } from '../../src/index.ts';
import { ON_CLICKHOUSE } from './driver.ts';
import { logAll } from './logged-engine.ts';

/**
 * Both drivers answer alike, byte for byte: on ClickHouse, a conformance suite also sends each
 * request to a DuckDB engine holding the same events, and ClickHouse's answer must have the same
 * status and the same JSON text. Sums, means and percentiles follow one exact rule
 * (docs/query-semantics.md), so no number may differ; keys, their order, labels and nulls neither.
 */
export interface DuckDbTwin {
  /** Fails unless `answer` (ClickHouse's to `body`) is DuckDB's answer to `body`, byte for byte. */
  expectSame(body: Record<string, unknown>, answer: EngineResponse<unknown>): Promise<void>;
  close(): Promise<void>;
}

/**
 * A DuckDB engine holding `events`, each sent through `/api/log` (as its `text` where it has one),
 * as `loggedEngine` sends them; none outside the ClickHouse project, where the suite's
 * own engine is on DuckDB already.
 */
export async function duckdbTwin(
  name: string,
  key: string,
  events: ReadonlyArray<{ timestamp: number; json: Record<string, unknown>; text?: string }>,
  now: number,
): Promise<DuckDbTwin | undefined> {
  if (!ON_CLICKHOUSE) return undefined;
  const dir = mkdtempSync(join(tmpdir(), `engine-${name}-duckdb-`));
  const engine = await createEngine({ dataDir: dir, workspaces: { default: key }, now: () => now });
  for (const answer of await logAll(engine, key, events)) expect(answer.status).toBe(200);
  return {
    async expectSame(body, answer) {
      const duckdb = textOf(await engine.query(body));
      const clickhouse = textOf(answer);
      if (duckdb === clickhouse) return;
      expect.fail(
        `${JSON.stringify(body)}\n  duckdb:     ${duckdb.slice(0, 800)}\n  clickhouse: ${clickhouse.slice(0, 800)}`,
      );
    },
    async close() {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The answer's status and its JSON text exactly as the HTTP app would send it. */
function textOf(answer: EngineResponse<unknown>): string {
  return `${answer.status} ${answer.json ?? JSON.stringify(answer.body)}`;
}
