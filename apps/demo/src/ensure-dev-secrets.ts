import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SigningKey } from '@analytics-chart/edge';
import { ensureDevSigningKeys } from '@analytics-chart/edge/node';

/** The demo's three secrets, and where each came from. */
export interface DemoSecrets {
  /** The engine workspace key (the analytics service's API key). */
  apiKey: string;
  /** The edge's id-signing keys. */
  signingKeys: readonly SigningKey[] | string;
  /** The host's session-cookie secret, shared with the edge's session check. */
  sessionSecret: string;
  /** Development files created just now (to say so). */
  created: string[];
  /** Variables taken from the environment instead of files. */
  fromEnv: string[];
}

/** The development files under the data directory. */
export const DEV_SECRET_FILES = {
  apiKey: 'analytics-api-key',
  signingKeys: 'edge-signing-keys',
  sessionSecret: 'session-secret',
} as const;

function readOrCreate(path: string, created: string[]): string {
  if (existsSync(path)) {
    const text = readFileSync(path, 'utf8').trim();
    if (text.length >= 32) return text;
    throw new Error(`${path} holds fewer than 32 characters; delete it to get a fresh one`);
  }
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(path, `${secret}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  created.push(path);
  return secret;
}

function fromEnvironment(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

/**
 * Reads the demo's secrets from the environment (`ANALYTICS_API_KEY`, `EDGE_SIGNING_KEYS`,
 * `SESSION_SECRET`), or else from development files under `dataDir`, creating each missing file
 * with a fresh random value (mode 0600; `.data/` is git-ignored). Production sets all three in
 * the environment and never uses these files.
 */
export function ensureDevSecrets(dataDir: string, env: NodeJS.ProcessEnv): DemoSecrets {
  mkdirSync(dataDir, { recursive: true });
  const created: string[] = [];
  const fromEnv: string[] = [];
  const pick = (name: string, file: string): string => {
    const value = fromEnvironment(env, name);
    if (value !== undefined) {
      fromEnv.push(name);
      return value;
    }
    return readOrCreate(join(dataDir, file), created);
  };
  const apiKey = pick('ANALYTICS_API_KEY', DEV_SECRET_FILES.apiKey);
  const sessionSecret = pick('SESSION_SECRET', DEV_SECRET_FILES.sessionSecret);
  let signingKeys: readonly SigningKey[] | string;
  const envKeys = fromEnvironment(env, 'EDGE_SIGNING_KEYS');
  if (envKeys !== undefined) {
    fromEnv.push('EDGE_SIGNING_KEYS');
    signingKeys = envKeys;
  } else {
    const path = join(dataDir, DEV_SECRET_FILES.signingKeys);
    if (!existsSync(path)) created.push(path);
    signingKeys = ensureDevSigningKeys(path);
  }
  return { apiKey, signingKeys, sessionSecret, created, fromEnv };
}
