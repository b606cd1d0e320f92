import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createEngine, type Engine } from '../../src/index.ts';
import { driverOptions } from '../helpers/driver.ts';
import { referenceAnswer } from '../helpers/reference.ts';

/**
 * Splits over more (series, bucket) cells than the engine ranks itself (MAX_SPLIT_CELLS), where
 * each driver ranks in SQL: a Sum must still be the exact rule's values, the same text on both
 * drivers, and the reference's. (Avg is not here: SQL picks its top series by a plain double
 * key, and where many series tie exactly, each driver's rounding picks other ones.)
 */

const NOW = 1_800_000_000;
const KEY = 'ranked-splits-key';
const dir = mkdtempSync(join(tmpdir(), 'engine-ranked-splits-'));
const engines: Engine[] = [];
// 250 split values in 60 minutes: up to 15,000 cells; values that floating-point sums get wrong.
const events = Array.from({ length: 16_000 }, (_, i) => ({
  timestamp: NOW - 3600 + 60 * (i % 60) + 1,
  json: { s: `v${(i * 7) % 250}`, x: [0.1, 1e16, -1e16, 3, 2 ** -60, 123.456][i % 6] as number },
}));

beforeAll(async () => {
  const workspaces = { default: KEY };
  engines.push(
    await createEngine({ dataDir: join(dir, 'duckdb'), workspaces, now: () => NOW }),
    await createEngine({
      dataDir: join(dir, 'ch'),
      workspaces,
      now: () => NOW,
      ...driverOptions(),
    }),
  );
  for (const engine of engines) {
    // One bulk per minute: its events share their second.
    for (let minute = 0; minute < 60; minute++) {
      const timestamp = NOW - 3600 + 60 * minute + 1;
      const jsons = events
        .filter((e) => e.timestamp === timestamp)
        .map((e) => JSON.stringify(e.json));
      const answer = await engine.bulkLog({ api_key: KEY, timestamp, jsons });
      expect(answer.status).toBe(200);
    }
  }
}, 300_000);

afterAll(async () => {
  await Promise.all(engines.map((e) => e.close()));
  rmSync(dir, { recursive: true, force: true });
});

test.each(['Sum'])(
  '%s over more cells than the engine ranks',
  async (aggregation) => {
    const body = {
      api_key: KEY,
      graph_type: 'Multi Line',
      granularity: 'Minute',
      split: 's',
      aggregation,
      metric: 'x',
      start: NOW - 3700,
      end: NOW,
      IANA_time_zone: 'UTC',
    };
    const [duckdb, clickhouse] = await Promise.all(engines.map((e) => e.query(body)));
    expect(duckdb?.status).toBe(200);
    expect(JSON.stringify(clickhouse?.body)).toBe(JSON.stringify(duckdb?.body));
    expect(duckdb?.body).toEqual(referenceAnswer(events, body, NOW));
  },
  120_000,
);
