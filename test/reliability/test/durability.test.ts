/**
 * Item 1: every event that got a 2xx survives kill -9 of the engine process exactly once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { runDurability } from '../src/durability-run.ts';
import { reportFigures } from '../src/figures.ts';
import { budget } from '../src/profile.ts';
import { seededRandom } from '../src/seeded-random.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'reliability-durability-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test(`acknowledged events survive ${budget().kills} kill -9s of the engine, exactly once`, async () => {
  const outcome = await runDurability({
    dataDir,
    kills: budget().kills,
    random: seededRandom(),
  });
  reportFigures(
    'durability',
    `Durability: analytics-engine serve killed with SIGKILL ${outcome.kills} times (seed ${outcome.seed})`,
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
