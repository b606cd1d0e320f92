import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createEngine, type Engine } from '../src/index.ts';
import { WorkspaceDb } from '../src/storage/duckdb/workspace-db.ts';
import { expectClose } from './helpers/expect-close.ts';
import { type FixtureEvent, referenceAnswer } from './helpers/reference.ts';

/**
 * A collection whose keys grow: batches that carry none of the many keys seen before go to a
 * narrower table of their own, and every answer, Samples' order and SQL mode's view still
 * cover every event, also after the engine is opened again.
 */

const KEY = 'segments-key';
const NOW = 1_800_000_000;
let dir: string;
let engine: Engine;
const events: FixtureEvent[] = [];

async function open() {
  // Sent objects, never request bytes: no body workers.
  engine = await createEngine({
    dataDir: dir,
    workspaces: { default: KEY },
    now: () => NOW,
    bodyWorkers: 0,
  });
}

async function send(jsons: Array<Record<string, unknown>>, timestamp: number) {
  const answer = await engine.bulkLog({ api_key: KEY, collection: 'grow', timestamp, jsons });
  expect(answer.status).toBe(200);
  for (const json of jsons) events.push({ timestamp, json });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'engine-segments-'));
  await open();
  let t = NOW - 86_400;
  // 300 keys first (75 to an event, so none is a key only wide events hold), then small batches
  // of other keys, the old keys now and then, and a key that changes kind from one batch to the
  // next.
  const wide = Array.from({ length: 4 }, (_, e) => {
    const json: Record<string, unknown> = { kind: 'wide', v: 1 };
    for (let k = e * 75; k < (e + 1) * 75; k++) json[`old_${k}`] = k % 2 ? k : `s${k}`;
    return json;
  });
  await send(wide, t++);
  for (let b = 0; b < 12; b++) {
    const batch = Array.from({ length: 5 }, (_, i) => ({
      kind: b % 2 ? 'odd' : 'even',
      v: b % 3 === 0 ? `${i}` : i + b,
      [`new_${b % 4}`]: b % 4 === 1 ? [i, 'x'] : i,
      ...(b === 7 ? { old_3: 'back', old_4: 4.5 } : {}),
    }));
    await send(batch, t);
    if (b % 3 === 0) t++;
  }
});

afterAll(async () => {
  await engine?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const QUERIES: Array<Record<string, unknown>> = [
  { graph_type: 'Table', split: 'kind', aggregation: 'Sum', metric: 'v' },
  { graph_type: 'Table', split: 'v' },
  { graph_type: 'Single Value', filters: [['old_3', '=', 3]] },
  { graph_type: 'Single Value', filters: [['old_3', '≠', 'back']] },
  { graph_type: 'Single Value', aggregation: 'Avg', metric: 'old_4' },
  { graph_type: 'Single Value', filters: [['new_1', 'includes', 'x']] },
  { graph_type: 'Bar Chart', split: 'new_2', aggregation: 'P90', metric: 'new_0' },
  { graph_type: 'Single Line', granularity: 'Hour', filters: [['kind', '≠', 'odd']] },
  { graph_type: 'Samples', order: 'Ascending', filters: [['kind', '=', 'even']] },
  { graph_type: 'Samples', filters: [['kind', '=', 'even']] },
];

async function checkAll() {
  for (const query of QUERIES) {
    const body = { api_key: KEY, collection: 'grow', start: NOW - 2 * 86_400, end: NOW, ...query };
    const answer = await engine.query(body);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expectClose(answer.body, referenceAnswer(events, body, NOW, 'grow'), JSON.stringify(query));
  }
  const sql = await engine.query({
    api_key: KEY,
    graph_type: 'Single Value',
    sql_query: "SELECT 'all' AS l, count(*) AS n FROM grow",
    label_column: 'l',
    value_column: 'n',
  });
  expect(sql.status, JSON.stringify(sql.body)).toBe(200);
  expect(JSON.stringify(sql.body)).toContain(`${events.length}`);
}

describe('a collection whose keys grow', () => {
  test('answers match the reference', async () => {
    await checkAll();
  });
  test('and still do once the engine is opened again', async () => {
    await engine.close();
    const db = await WorkspaceDb.open(join(dir, 'default.duckdb'));
    try {
      // The batches without the 300 keys went to a table of their own.
      expect(db.catalog.get('grow')?.segments.length).toBeGreaterThan(1);
    } finally {
      await db.close();
    }
    await open();
    await checkAll();
  });
});
