import { COLLECTION_GRAPH_TYPES, FILTER_OPERATORS } from '@analytics-chart/protocol';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Engine } from '../src/index.ts';
import { type DuckDbTwin, duckdbTwin } from './helpers/duckdb-twin.ts';
import { expectClose } from './helpers/expect-close.ts';
import { events, FIELDS, KEY, NOW, request } from './helpers/generated-requests.ts';
import { loggedEngine } from './helpers/logged-engine.ts';
import { referenceAnswer } from './helpers/reference.ts';

/**
 * The generated valid requests (`helpers/generated-requests.ts`): none may answer 5xx, and each
 * answer must be the reference's. On ClickHouse a third of them (every shape among them) must
 * also be answered as DuckDB answers them, byte for byte (`helpers/duckdb-twin.ts`).
 */

let engine: Engine;
const EVENTS = events();

let logged: Awaited<ReturnType<typeof loggedEngine>> | undefined;
let twin: DuckDbTwin | undefined;

beforeAll(async () => {
  [logged, twin] = await Promise.all([
    loggedEngine('generated', KEY, EVENTS, NOW),
    duckdbTwin('generated', KEY, EVENTS, NOW),
  ]);
  engine = logged.engine;
});

afterAll(async () => {
  await logged?.close();
  await twin?.close();
});

describe('generated valid requests', () => {
  for (const graphType of COLLECTION_GRAPH_TYPES) {
    test(`${graphType}: every operator on every field shape, with splits and metrics on them`, async () => {
      let i = 0;
      for (const operator of FILTER_OPERATORS) {
        for (const field of FIELDS) {
          const body = request(graphType, operator, field, i++);
          const answer = await engine.query(body);
          if (i % 3 === 0) await twin?.expectSame(body, answer);
          if (answer.status !== 200) {
            expect.fail(
              `${answer.status} ${JSON.stringify(answer.body)} for ${JSON.stringify(body)}`,
            );
          }
          expectClose(answer.body, referenceAnswer(EVENTS, body, NOW), JSON.stringify(body));
        }
      }
    });
  }
});
