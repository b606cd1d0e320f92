import { describe, expect, it } from 'vitest';
import { httpBackend } from '../src/backend/http-backend.ts';
import { edgeConfigFromEnv } from '../src/config/config-from-env.ts';
import { createEdge } from '../src/create-edge.ts';
import { generateSigningKey, parseSigningKeys } from '../src/tokens/signing-keys.ts';

const key = generateSigningKey();
const queries = {
  total: { query: { graph_type: 'Single Value', start: '1 day ago', end: 'now' } },
};
const backend = httpBackend({ baseUrl: 'http://127.0.0.1:9', apiKey: 'some-workspace-key' });

function startup(make: () => unknown): string {
  try {
    make();
  } catch (error) {
    return (error as Error).message;
  }
  return 'started';
}

describe('start-up checks', () => {
  it('starts with a sound config', () => {
    expect(startup(() => createEdge({ signingKeys: [key], backend, queries }))).toBe('started');
  });

  it.each([
    [{ signingKeys: '' }, /signingKeys is missing: set EDGE_SIGNING_KEYS/],
    [{ signingKeys: [] }, /holds no key; run `npx analytics-edge keygen`/],
    [{ signingKeys: [{ kid: 'a', secret: 'short' }] }, /secret of key 'a' is too short/],
    [
      { signingKeys: [{ kid: 'a', secret: 'a'.repeat(40) }] },
      /secret of key 'a' is too repetitive/,
    ],
    [
      { signingKeys: [{ kid: 'a', secret: 'changeme-changeme-changeme-changeme-0123' }] },
      /secret of key 'a' is a placeholder/,
    ],
    [{ signingKeys: [key, { ...key }] }, /kid '.*' appears twice/],
    [{ signingKeys: [{ kid: 'bad kid!', secret: key.secret }] }, /key 1 has an invalid kid/],
    [{ signingKeys: 'no-colon-here' }, /EDGE_SIGNING_KEYS: key 1 is not written as kid:secret/],
    [{ backend: undefined }, /backend is missing/],
    [{ queries: undefined }, /queries is missing/],
    [
      {
        queries: {
          total: queries.total,
          'bad-one': { query: { graph_type: 'Pie Chart', start: '1 day ago', end: 'now' } },
        },
      },
      /query "bad-one": split: Pie Chart needs a split field/,
    ],
    [{ allowedOrigins: ['app.example.com'] }, /allowedOrigins: 'app.example.com' is not an origin/],
    [{ cache: { ttl: 'soon' } }, /cache.ttl: 'soon' is not a lifetime/],
    [{ ids: { sessionTtl: '2h' } }, /sessionTtl is longer than ids.maxSessionTtl/],
    [{ rateLimit: { perIp: { perSecond: 0, burst: 1 } } }, /rateLimit.perIp/],
    [{ publicUrl: 'app.example.com/analytics' }, /publicUrl: 'app.example.com\/analytics' is not/],
    [{ publicUrl: 'ftp://app.example.com' }, /publicUrl: 'ftp:\/\/app.example.com' is not/],
    [{ publicUrl: 'https://app.example.com/analytics?x=1' }, /publicUrl: .* is not/],
    [{ publicUrl: 'https://user@app.example.com/analytics' }, /publicUrl: .* is not/],
  ])('refuses a broken config with a sentence naming it (%#)', (patch, message) => {
    const result = startup(() =>
      createEdge({ signingKeys: [key], backend, queries, ...patch } as never),
    );
    expect(result).toMatch(/^analytics edge: /);
    expect(result).toMatch(message);
    // The message never repeats a secret.
    expect(result).not.toContain(key.secret);
  });

  it('reads secrets from the environment and names what is missing', () => {
    const env = {
      ANALYTICS_API_KEY: 'workspace-key-123',
      ANALYTICS_BASE_URL: 'https://analytics.example.com',
      EDGE_SIGNING_KEYS: `${key.kid}:${key.secret}`,
      EDGE_ALLOWED_ORIGINS: 'https://app.example.com, https://www.example.com',
      EDGE_REVOKED_IDS: 'j1,j2',
      EDGE_PUBLIC_URL: 'https://app.example.com/analytics/',
    };
    const config = edgeConfigFromEnv(env, { queries });
    expect(config.publicUrl).toBe('https://app.example.com/analytics/');
    expect(edgeConfigFromEnv(env, { queries, publicUrl: 'https://b.example' }).publicUrl).toBe(
      'https://b.example',
    );
    expect(config.signingKeys).toBe(env.EDGE_SIGNING_KEYS);
    expect(config.allowedOrigins).toEqual(['https://app.example.com', 'https://www.example.com']);
    expect(config.revokedIds).toEqual(['j1', 'j2']);
    expect(config.backend.secrets).toEqual(['workspace-key-123']);
    expect(startup(() => createEdge(config))).toBe('started');

    expect(
      startup(() => edgeConfigFromEnv({ ...env, EDGE_SIGNING_KEYS: undefined }, { queries })),
    ).toMatch(/EDGE_SIGNING_KEYS is not set/);
    expect(
      startup(() => edgeConfigFromEnv({ ...env, ANALYTICS_API_KEY: ' ' }, { queries })),
    ).toMatch(/ANALYTICS_API_KEY is not set/);
    expect(
      startup(() =>
        edgeConfigFromEnv({ ...env, ANALYTICS_API_KEY: 'key-with-newline\n' }, { queries }),
      ),
    ).toMatch(/whitespace/);
    expect(
      startup(() => edgeConfigFromEnv({ ...env, ANALYTICS_BASE_URL: undefined }, { queries })),
    ).toMatch(/ANALYTICS_BASE_URL is not set/);
    expect(
      startup(() => edgeConfigFromEnv({ ...env, ANALYTICS_BASE_URL: 'ftp://x' }, { queries })),
    ).toMatch(/not an http\(s\) URL/);
    expect(
      startup(() => edgeConfigFromEnv({ ...env, ANALYTICS_TIMEOUT_MS: 'soon' }, { queries })),
    ).toMatch(/ANALYTICS_TIMEOUT_MS must be a whole number/);
    // With a backend given in code, the service variables are not needed.
    const withBackend = edgeConfigFromEnv(
      { EDGE_SIGNING_KEYS: env.EDGE_SIGNING_KEYS },
      { queries, backend },
    );
    expect(withBackend.backend).toBe(backend);
  });

  it('parses keys in both written forms, current key first', () => {
    const other = generateSigningKey();
    const text = `${key.kid}:${key.secret},${other.kid}:${other.secret}`;
    expect(parseSigningKeys(text)).toEqual([key, other]);
    expect(parseSigningKeys(JSON.stringify([key, other]))).toEqual([key, other]);
    expect(parseSigningKeys(JSON.stringify({ keys: [other] }))).toEqual([other]);
    expect(key.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(key.kid).not.toBe(other.kid);
  });
});
