import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COLLECTION_GRAPH_TYPES, FILTER_OPERATORS } from '@analytics-chart/protocol';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createEngine, type Engine } from '../../src/index.ts';
import { driverOptions } from '../helpers/driver.ts';
import * as generated from '../helpers/generated-requests.ts';
import * as numbers from '../helpers/number-cases.ts';

/**
 * Both drivers answer alike, byte for byte: the same events go into an engine on DuckDB and one on
 * ClickHouse, and a third of the generated requests (every graph type, operator and field shape)
 * and every number-rule case must get the same status and the same JSON text from each. Sums,
 * means and percentiles (a Cumulative Line's too) follow one exact rule
 * (docs/query-semantics.md), so no number may differ. Keys, their order, labels, nulls and every
 * number must be the same text.
 */

const NOW = generated.NOW;
const dir = mkdtempSync(join(tmpdir(), 'engine-driver-equality-'));
const engines: Engine[] = [];

beforeAll(async () => {
  expect(numbers.NOW).toBe(NOW);
  const workspaces = { generated: generated.KEY, numbers: numbers.KEY };
  engines.push(
    await createEngine({ dataDir: join(dir, 'duckdb'), workspaces, now: () => NOW }),
    await createEngine({
      dataDir: join(dir, 'clickhouse'),
      workspaces,
      now: () => NOW,
      ...driverOptions(),
    }),
  );
  await Promise.all(
    engines.map(async (engine) => {
      for (const [key, events] of [
        [generated.KEY, generated.events()],
        [numbers.KEY, numbers.events()],
      ] as const) {
        for (const e of events) {
          const json = e.text ?? e.json;
          const logged = await engine.log({ api_key: key, timestamp: e.timestamp, json });
          expect(logged.status).toBe(200);
        }
      }
    }),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(engines.map((e) => e.close()));
  rmSync(dir, { recursive: true, force: true });
});

/** The answer's status and its JSON text exactly as the HTTP app would send it. */
async function text(engine: Engine, body: Record<string, unknown>): Promise<string> {
  const answer = await engine.query(body);
  return `${answer.status} ${answer.json ?? JSON.stringify(answer.body)}`;
}

async function same(body: Record<string, unknown>): Promise<void> {
  const [duckdb, clickhouse] = (await Promise.all(engines.map((e) => text(e, body)))) as [
    string,
    string,
  ];
  if (duckdb === clickhouse) return;
  expect.fail(
    `${JSON.stringify(body)}\n  duckdb:     ${duckdb.slice(0, 800)}\n  clickhouse: ${clickhouse.slice(0, 800)}`,
  );
}

describe('DuckDB and ClickHouse answer byte for byte alike', () => {
  test('a third of the generated requests, every shape among them', async () => {
    for (const graphType of COLLECTION_GRAPH_TYPES) {
      let i = 0;
      for (const operator of FILTER_OPERATORS) {
        for (const field of generated.FIELDS) {
          const body = generated.request(graphType, operator, field, i++);
          if (i % 3 !== 0) continue;
          await same(body);
        }
      }
    }
  }, 120_000);

  // One test per field and aggregation, as reading the payload at the deep path is slow.
  const numberCases: Array<[string, Record<string, unknown>[]]> = [
    [
      'every number-rule case',
      [
        ...numbers.AGGREGATIONS.flatMap((a) => numbers.aggregationRequests(a)),
        ...numbers.filterRequests(),
      ],
    ],
    ...numbers.AGGREGATIONS.map((a): [string, Record<string, unknown>[]] => [
      `number-rule cases of ${a} at ${numbers.DEEP}`,
      numbers.aggregationRequests(a, numbers.DEEP),
    ]),
    [`number-rule filters at ${numbers.DEEP}`, numbers.filterRequests(numbers.DEEP)],
  ];
  for (const [name, bodies] of numberCases) {
    test(name, async () => {
      for (const body of bodies) {
        await same({
          api_key: numbers.KEY,
          collection: 'all_events',
          start: NOW - 6 * 86_400,
          end: NOW,
          IANA_time_zone: 'UTC',
          ...body,
        });
      }
    }, 120_000);
  }
});
