import { COLLECTION_GRAPH_TYPES, FILTER_OPERATORS } from '@analytics-chart/protocol';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Engine } from '../src/index.ts';
import { expectClose } from './helpers/expect-close.ts';
import { events, FIELDS, KEY, NOW, request } from './helpers/generated-requests.ts';
import { loggedEngine } from './helpers/logged-engine.ts';
import { referenceAnswer } from './helpers/reference.ts';

/** The generated valid requests (`helpers/generated-requests.ts`): none may answer 5xx, and each answer must be the reference's. */

let engine: Engine;
const EVENTS = events();

let logged: Awaited<ReturnType<typeof loggedEngine>> | undefined;

beforeAll(async () => {
  logged = await loggedEngine('generated', KEY, EVENTS, NOW);
  engine = logged.engine;
});

afterAll(() => logged?.close());

describe('generated valid requests', () => {
  for (const graphType of COLLECTION_GRAPH_TYPES) {
    test(`${graphType}: every operator on every field shape, with splits and metrics on them`, async () => {
      let i = 0;
      for (const operator of FILTER_OPERATORS) {
        for (const field of FIELDS) {
          const body = request(graphType, operator, field, i++);
          const answer = await engine.query(body);
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
