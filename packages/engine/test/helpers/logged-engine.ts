import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { createEngine, type Engine, type EngineResponse } from '../../src/index.ts';
import { driverOptions } from './driver.ts';

/**
 * An engine on this run's driver holding `events`, each sent through `/api/log` (as its `text`
 * where it has one). It is sent objects, never request bytes, so it starts no body workers.
 */
export async function loggedEngine(
  name: string,
  key: string,
  events: ReadonlyArray<{ timestamp: number; json: Record<string, unknown>; text?: string }>,
  now: number,
): Promise<{ engine: Engine; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), `engine-${name}-`));
  const engine = await createEngine({
    dataDir: dir,
    workspaces: { default: key },
    now: () => now,
    bodyWorkers: 0,
    ...driverOptions(),
  });
  for (const answer of await logAll(engine, key, events)) expect(answer.status).toBe(200);
  return {
    engine,
    async close() {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Sends each event through `/api/log`, all at once as concurrent clients do, so that the engine's
 * group commit writes them in a few inserts rather than one each; the order of events sharing a
 * second is not kept.
 */
export function logAll(
  engine: Engine,
  key: string,
  events: ReadonlyArray<{ timestamp: number; json: Record<string, unknown>; text?: string }>,
): Promise<Array<EngineResponse<unknown>>> {
  return Promise.all(
    events.map((e) => engine.log({ api_key: key, timestamp: e.timestamp, json: e.text ?? e.json })),
  );
}
