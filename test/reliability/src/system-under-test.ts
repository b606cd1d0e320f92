/**
 * The whole chain as it is deployed, in real processes on loopback: `analytics-engine serve`
 * over a temporary data directory holding seeded events, and an edge process in front of it
 * (HTTP backend) or in front of another backend URL (a fault-injecting service).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerProcess } from './child-process.ts';
import { type EdgeProcessOptions, startEdgeProcess } from './edge-process.ts';
import { startEngineProcess } from './engine-process.ts';
import { keysEnv, newKey, type TestKey } from './forge-jwt.ts';
import { type SeedEvent, seedEvents } from './seed-events.ts';
import { seededRandom } from './seeded-random.ts';

/** A running engine with seeded events. */
export interface EngineUnderTest {
  process: ServerProcess;
  url: string;
  apiKey: string;
  events: SeedEvent[];
  close(): Promise<void>;
}

/** Starts an engine process over a fresh directory and ingests `count` seeded events. */
export async function startSeededEngine(count: number): Promise<EngineUnderTest> {
  const dataDir = mkdtempSync(join(tmpdir(), 'reliability-engine-'));
  const apiKey = `wk-${randomBytes(16).toString('hex')}`;
  const engine = await startEngineProcess(dataDir, apiKey);
  const events = await seedEvents(engine.url, apiKey, count, seededRandom(7));
  return {
    process: engine,
    url: engine.url,
    apiKey,
    events,
    async close() {
      await engine.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The secrets of an edge deployment, generated per run. */
export interface EdgeSecrets {
  key: TestKey;
  sessionSecret: string;
}

/** Fresh secrets: one signing key (`k1`) and a session secret. */
export function newEdgeSecrets(kid = 'k1'): EdgeSecrets {
  return { key: newKey(kid), sessionSecret: randomBytes(32).toString('base64url') };
}

/** Starts an edge process with these secrets in front of `baseUrl`. */
export function startEdge(
  secrets: EdgeSecrets,
  backend: { url: string; apiKey: string },
  options: Partial<EdgeProcessOptions> = {},
): Promise<ServerProcess> {
  return startEdgeProcess({
    signingKeys: keysEnv(secrets.key),
    sessionSecret: secrets.sessionSecret,
    apiKey: backend.apiKey,
    baseUrl: backend.url,
    ...options,
  });
}
