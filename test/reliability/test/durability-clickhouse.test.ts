/**
 * Item 1 on the ClickHouse driver: every event that got a 2xx from `serve --clickhouse`
 * survives kill -9 of the engine process exactly once. ClickHouse is the engine's own test
 * ClickHouse (chdb behind its HTTP wire format, `packages/engine/test/clickhouse/`); it stays
 * up while the engine is killed and restarted against it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  type ChdbHttpServer,
  startChdbHttpServer,
} from '../../../packages/engine/test/clickhouse/chdb-http-server.ts';
import { runDurability } from '../src/durability-run.ts';
import { reportFigures } from '../src/figures.ts';
import { budget } from '../src/profile.ts';
import { seededRandom } from '../src/seeded-random.ts';

const dir = mkdtempSync(join(tmpdir(), 'reliability-durability-ch-'));
const password = 'durability-password';
let clickhouse: ChdbHttpServer;
beforeAll(async () => {
  clickhouse = await startChdbHttpServer({ path: join(dir, 'chdb'), password });
});
afterAll(async () => {
  await clickhouse?.close();
  rmSync(dir, { recursive: true, force: true });
});

test(`on ClickHouse, acknowledged events survive ${budget().kills} kill -9s of the engine, exactly once`, async () => {
  const outcome = await runDurability({
    dataDir: join(dir, 'unused'),
    kills: budget().kills,
    random: seededRandom(),
    clickhouse: { url: clickhouse.url, password },
  });
  reportFigures(
    'durability-clickhouse',
    `Durability on ClickHouse: analytics-engine serve --clickhouse killed with SIGKILL ${outcome.kills} times (seed ${outcome.seed})`,
    ['figure', 'value'],
    [
      ['kills survived', outcome.kills],
      ['requests acknowledged (2xx)', outcome.requestsAcknowledged],
      ['events acknowledged', outcome.eventsAcknowledged],
      ['events sent, no answer (in flight at a kill)', outcome.eventsUnacknowledged],
      ['events found after the last restart', outcome.eventsFound],
      ['acknowledged events missing', outcome.missing.length],
      ['events stored more than once', outcome.duplicates.length],
    ],
    { outcome: { ...outcome, missing: outcome.missing.slice(0, 20) } },
  );
  expect(outcome.requestsRefused).toEqual([]);
  expect(outcome.missing).toEqual([]);
  expect(outcome.duplicates).toEqual([]);
  expect(outcome.unknown).toEqual([]);
  expect(outcome.restartShortfalls).toEqual([]);
  expect(outcome.keyLeaks).toBe(0);
  expect(outcome.eventsFound).toBe(outcome.eventsAcknowledged + outcome.unacknowledgedFound);
  expect(outcome.eventsAcknowledged).toBeGreaterThan(outcome.kills * 10);
});
