import type { Backend } from '../backend/backend.ts';
import { httpBackend } from '../backend/http-backend.ts';
import type { EdgeConfig } from './edge-config.ts';

/** The environment variables the edge reads (Node `process.env`, Workers bindings). */
export interface EdgeEnv {
  /** The workspace key. Required unless `overrides.backend` is given. */
  ANALYTICS_API_KEY?: string;
  /** The analytics service, e.g. `https://analytics.example.com`. */
  ANALYTICS_BASE_URL?: string;
  /** `kid:secret[,kid:secret…]`, current key first. */
  EDGE_SIGNING_KEYS?: string;
  /** Comma-separated origins allowed to call the API from browsers (`*` for public embeds). */
  EDGE_ALLOWED_ORIGINS?: string;
  /** Where viewers reach the edge, mount path included (the oEmbed answers and the snippets). */
  EDGE_PUBLIC_URL?: string;
  /** Comma-separated revoked jtis. */
  EDGE_REVOKED_IDS?: string;
  /** Backend time limit of one attempt in milliseconds. @default 10000 */
  ANALYTICS_TIMEOUT_MS?: string;
  /** Further attempts after a backend time-out, network failure or 5xx. @default 2 */
  ANALYTICS_RETRIES?: string;
  [name: string]: unknown;
}

function text(env: EdgeEnv, name: string): string | undefined {
  const value = env[name];
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function number(env: EdgeEnv, name: string): number | undefined {
  const value = text(env, name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    throw new Error(`analytics edge: ${name} must be a whole number, not '${value}'`);
  }
  return n;
}

function list(value: string | undefined): string[] | undefined {
  const items = value
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items?.length ? items : undefined;
}

/**
 * The HTTP backend the environment describes: `ANALYTICS_BASE_URL` with `ANALYTICS_API_KEY`, and
 * optionally `ANALYTICS_TIMEOUT_MS` and `ANALYTICS_RETRIES`. Throws a sentence naming what is
 * missing.
 */
export function backendFromEnv(env: EdgeEnv): Backend {
  const apiKey = env.ANALYTICS_API_KEY;
  const baseUrl = text(env, 'ANALYTICS_BASE_URL');
  if (typeof apiKey !== 'string' || apiKey.trim() === '') {
    throw new Error(
      'analytics edge: ANALYTICS_API_KEY is not set (the workspace key, from a secret store)',
    );
  }
  if (!baseUrl) {
    throw new Error('analytics edge: ANALYTICS_BASE_URL is not set (the analytics service URL)');
  }
  const timeout = number(env, 'ANALYTICS_TIMEOUT_MS');
  const retries = number(env, 'ANALYTICS_RETRIES');
  try {
    return httpBackend({
      baseUrl,
      apiKey,
      ...(timeout !== undefined ? { timeoutMs: timeout } : {}),
      ...(retries !== undefined ? { retries } : {}),
    });
  } catch (error) {
    throw new Error(`analytics edge: ${(error as Error).message}`);
  }
}

/**
 * Builds an edge config from the environment plus code-side settings (`overrides`: at least the
 * query registry). Secrets only come from the environment; `overrides.backend` replaces the HTTP
 * backend (e.g. the in-process engine), and then `ANALYTICS_BASE_URL` is not needed. Throws a
 * sentence naming the missing variable.
 */
export function edgeConfigFromEnv(
  env: EdgeEnv,
  overrides: Partial<EdgeConfig> & Pick<EdgeConfig, 'queries'>,
): EdgeConfig {
  const signingKeys = overrides.signingKeys ?? text(env, 'EDGE_SIGNING_KEYS');
  if (signingKeys === undefined) {
    throw new Error(
      'analytics edge: EDGE_SIGNING_KEYS is not set; run `npx analytics-edge keygen` and set it to kid:secret',
    );
  }
  const backend = overrides.backend ?? backendFromEnv(env);
  const origins = overrides.allowedOrigins ?? list(text(env, 'EDGE_ALLOWED_ORIGINS'));
  const revoked = list(text(env, 'EDGE_REVOKED_IDS'));
  const publicUrl = overrides.publicUrl ?? text(env, 'EDGE_PUBLIC_URL')?.trim();
  return {
    ...overrides,
    ...(publicUrl ? { publicUrl } : {}),
    signingKeys,
    backend,
    ...(origins ? { allowedOrigins: origins } : {}),
    ...(revoked || overrides.revokedIds
      ? { revokedIds: [...(revoked ?? []), ...(overrides.revokedIds ?? [])] }
      : {}),
  };
}
