import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { createEngine, type Engine } from '../../src/index.ts';
import { driverOptions } from './driver.ts';

/**
 * An engine on this run's driver holding `events`, each sent through `/api/log` in order (as its
 * `text` where it has one). It is sent objects, never request bytes, so it starts no body workers.
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
  for (const e of events) {
    const json = e.text ?? e.json;
    const answer = await engine.log({ api_key: key, timestamp: e.timestamp, json });
    expect(answer.status).toBe(200);
  }
  return {
    engine,
    async close() {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
