/**
 * Item 1: every event that got a 2xx survives kill -9 of the engine process exactly once, on
 * each storage driver: DuckDB files (the default) and ClickHouse (`serve --clickhouse`, on the
 * engine's test ClickHouse: chdb behind ClickHouse's HTTP wire format,
 * `packages/engine/test/clickhouse/`), which stays up while the engine is killed and restarted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { startChdbHttpServer } from '../../../packages/engine/test/clickhouse/chdb-http-server.ts';
import { runDurability } from '../src/durability-run.ts';
import type { ClickHouseTarget } from '../src/engine-process.ts';
import { reportFigures } from '../src/figures.ts';
import { budget } from '../src/profile.ts';
import { seededRandom } from '../src/seeded-random.ts';

const dir = mkdtempSync(join(tmpdir(), 'reliability-durability-'));
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** The ClickHouse of the run, started only when its case runs. */
async function clickhouse(): Promise<ClickHouseTarget> {
  const password = 'durability-password';
  const server = await startChdbHttpServer({ path: join(dir, 'chdb'), password });
  cleanups.push(() => server.close());
  return { url: server.url, password };
}

const DRIVERS = [
  { driver: 'DuckDB', item: 'durability', command: 'serve', target: async () => undefined },
  {
    driver: 'ClickHouse',
    item: 'durability-clickhouse',
    command: 'serve --clickhouse',
    target: clickhouse,
  },
];

describe.each(DRIVERS)('on $driver', ({ item, command, target }) => {
  test(`acknowledged events survive ${budget().kills} kill -9s of the engine, exactly once`, async () => {
    const outcome = await runDurability({
      dataDir: join(dir, item),
      kills: budget().kills,
      random: seededRandom(),
      clickhouse: await target(),
    });
    reportFigures(
      item,
      `Durability: analytics-engine ${command} killed with SIGKILL ${outcome.kills} times (seed ${outcome.seed})`,
      ['figure', 'value'],
      [
        ['kills survived', outcome.kills],
        ['requests sent (log + bulk-log)', outcome.requestsSent],
        ['requests acknowledged (2xx)', outcome.requestsAcknowledged],
        ['requests refused (non-2xx)', outcome.requestsRefused.length],
        ['events acknowledged', outcome.eventsAcknowledged],
        ['events sent, no answer (in flight at a kill)', outcome.eventsUnacknowledged],
        ['events found after the last restart', outcome.eventsFound],
        ['  of which unacknowledged (allowed)', outcome.unacknowledgedFound],
        ['acknowledged events missing', outcome.missing.length],
        ['events stored more than once', outcome.duplicates.length],
        ['stored events never sent', outcome.unknown.length],
        ['restarts with a missing or doubled event', outcome.restartShortfalls.length],
        [
          'kill moments (ms after ready): min / max',
          `${Math.min(...outcome.killDelaysMs)} / ${Math.max(...outcome.killDelaysMs)}`,
        ],
      ],
      {
        outcome: {
          ...outcome,
          missing: outcome.missing.slice(0, 20),
          duplicates: outcome.duplicates.slice(0, 20),
        },
      },
    );

    expect(outcome.requestsRefused).toEqual([]);
    expect(outcome.missing).toEqual([]);
    expect(outcome.duplicates).toEqual([]);
    expect(outcome.unknown).toEqual([]);
    expect(outcome.restartShortfalls).toEqual([]);
    expect(outcome.keyLeaks).toBe(0);
    // The figure is the sum of the two kinds of stored events, counted independently.
    expect(outcome.eventsFound).toBe(outcome.eventsAcknowledged + outcome.unacknowledgedFound);
    // The run really wrote under every kill (not an idle engine being killed).
    expect(outcome.eventsAcknowledged).toBeGreaterThan(outcome.kills * 10);
  });
});
