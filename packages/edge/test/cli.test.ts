import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keyring } from '../src/tokens/keyring.ts';
import { generateSigningKey, parseSigningKeys } from '../src/tokens/signing-keys.ts';
import { verifyQueryId } from '../src/tokens/verify-query-id.ts';
import { type AnalyticsBackend, startAnalyticsBackend } from './support/analytics-backend.ts';

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('..', import.meta.url));
let dir: string;

/** The compiled CLI the published package's bin names (the global setup keeps it fresh). */
const BIN = 'dist/cli/main.js';

/**
 * Runs `analytics-edge …` with INIT_CWD set to `cwd`, as `pnpm edge` does; `loader` runs Node
 * with tsx's loader, as a host whose config is TypeScript must.
 */
async function edge(
  args: string[],
  env: Record<string, string> = {},
  cwd = dir,
  loader: string[] = [],
) {
  try {
    const { stdout, stderr } = await run(process.execPath, [...loader, BIN, ...args], {
      cwd: packageDir,
      env: { PATH: process.env.PATH ?? '', INIT_CWD: cwd, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** `analytics-edge serve --config FILE --port 0` as a child process, with a fresh signing key. */
function serve(config: string, env: Record<string, string> = {}) {
  const key = generateSigningKey();
  return spawn(process.execPath, [BIN, 'serve', '--config', config, '--port', '0'], {
    cwd: packageDir,
    env: {
      PATH: process.env.PATH ?? '',
      INIT_CWD: dir,
      EDGE_SIGNING_KEYS: `${key.kid}:${key.secret}`,
      ...env,
    },
  });
}

const SIGNUPS_CONFIG = `export default {
  publicUrl: 'https://app.example.com/analytics',
  queries: {
    signups: {
      title: 'Signups',
      query: { graph_type: 'Single Line', start: '30 days ago', end: 'now', filters: [['tenant', '=', { $param: 'tenant' }], ['plan', '=', { $param: 'plan' }]] },
      params: { tenant: { from: 'session' }, plan: { from: 'signer', enum: ['free', 'pro'] } },
    },
  },
};
`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'edge-cli-'));
  writeFileSync(join(dir, 'analytics-edge.config.mjs'), SIGNUPS_CONFIG);
  // The same config typed, in a folder of its own, for the TypeScript config test.
  mkdirSync(join(dir, 'typed'));
  writeFileSync(
    join(dir, 'typed', 'analytics-edge.config.ts'),
    `${SIGNUPS_CONFIG.replace('export default {', 'const config: { queries: object } = {')}export default config;\n`,
  );
  writeFileSync(
    join(dir, 'broken.config.mjs'),
    `export default { queries: { fine: { query: { graph_type: 'Single Value', start: '1 day ago', end: 'now' } }, wrong: { query: { graph_type: 'Bar Chart', start: '1 day ago', end: 'now' } } } };\n`,
  );
  writeFileSync(
    join(dir, 'typo.json'),
    JSON.stringify({ queries: {}, allowedOrigin: ['https://app.example.com'] }),
  );
  writeFileSync(join(dir, 'not-json.json'), '{ queries: {} }');
  writeFileSync(join(dir, 'serve.json'), JSON.stringify({ queries: {} }));
  writeFileSync(
    join(dir, 'inline.json'),
    JSON.stringify({
      title: 'Inline',
      query: { graph_type: 'Single Value', start: '7 days ago', end: 'now' },
    }),
  );
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('pnpm edge', () => {
  let keysText = '';

  it.each(['keygen', 'sign', 'inspect', 'check', 'serve', 'ids'])(
    '%s --help prints its usage',
    async (name) => {
      const out = await edge([name, '--help']);
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toMatch(new RegExp(`^analytics-edge ${name} `));
      expect(out.stderr).toBe('');
    },
  );

  it('keygen prints a strong key and how to set it', async () => {
    const first = await edge(['keygen']);
    const second = await edge(['keygen', '--kid', 'ops-2024']);
    expect(first.code).toBe(0);
    const line = /^ {2}EDGE_SIGNING_KEYS=(\S+)$/m.exec(first.stdout)?.[1] ?? '';
    const [key] = parseSigningKeys(line);
    expect(key?.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(second.stdout).toMatch(/^kid: {4}ops-2024$/m);
    expect(second.stdout).not.toContain(key?.secret);
    keysText = line;
    writeFileSync(join(dir, 'keys.txt'), `${line}\n`);
  });

  it('sign prints a verifiable public id and a ready-to-paste snippet', async () => {
    const out = await edge([
      'sign',
      '--query',
      'signups',
      '--param',
      'tenant=acme',
      '--param',
      'plan=pro',
      '--public',
      '--ttl',
      '30d',
      '--keys',
      'keys.txt',
    ]);
    expect(out.code, out.stderr).toBe(0);
    const id = /^(eyJ[\w-]+\.[\w-]+\.[\w-]+)$/m.exec(out.stdout)?.[1] ?? '';
    const outcome = await verifyQueryId(id, new Keyring(parseSigningKeys(keysText)), {
      now: Math.floor(Date.now() / 1000),
      skewSeconds: 0,
      maxLength: 8192,
    });
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.claims).toMatchObject({
      q: 'signups',
      p: { tenant: 'acme', plan: 'pro' },
      pub: true,
    });
    expect(outcome.claims.exp - outcome.claims.iat).toBe(30 * 86_400);
    expect(out.stdout).toContain(
      '<script type="module" src="https://app.example.com/analytics/analytics-chart.js"></script>',
    );
    expect(out.stdout).toContain(`<analytics-chart query-id="${id}"></analytics-chart>`);
    // The iframe and the bare URL, for editors that strip scripts and for oEmbed.
    const embedUrl = `https://app.example.com/analytics/embed/${id}`;
    expect(out.stdout).toContain(`<iframe src="${embedUrl}" title="Signups" width="100%"`);
    expect(out.stdout.split('\n')).toContain(embedUrl);
    expect(out.stdout).toContain(
      '<script async src="https://app.example.com/analytics/embed.js"></script>',
    );
    expect(out.stdout).toContain(outcome.claims.jti);
    expect(out.stdout).not.toContain(parseSigningKeys(keysText)[0]?.secret);
  });

  it('a TypeScript config is found and loaded when Node runs the CLI with tsx', async () => {
    const args = ['sign', '--query', 'signups', '--param', 'tenant=acme', '--param', 'plan=pro'];
    const key = generateSigningKey();
    const keys = { EDGE_SIGNING_KEYS: `${key.kid}:${key.secret}` };
    const typed = await edge([...args, '--public'], keys, join(dir, 'typed'), ['--import', 'tsx']);
    expect(typed.code, typed.stderr).toBe(0);
    expect(typed.stdout).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/m);
    // Without the loader, Node 20 cannot import it, and the error says what to do.
    const plain = await edge([...args, '--public'], keys, join(dir, 'typed'));
    expect(plain.code).toBe(1);
    expect(plain.stderr).toMatch(/tsx|\.json/);
  }, 20_000);

  it('sign reads keys from EDGE_SIGNING_KEYS and takes an inline definition', async () => {
    const out = await edge(
      [
        'sign',
        '--definition',
        'inline.json',
        '--subject',
        'alice',
        '--ttl',
        '5m',
        '--base',
        'http://localhost:8787/',
      ],
      {
        EDGE_SIGNING_KEYS: keysText,
      },
    );
    expect(out.code, out.stderr).toBe(0);
    const id = /^(eyJ[\w-]+\.[\w-]+\.[\w-]+)$/m.exec(out.stdout)?.[1] ?? '';
    const claims = JSON.parse(Buffer.from(id.split('.')[1] ?? '', 'base64url').toString());
    expect(claims).toMatchObject({ sub: 'alice', d: { title: 'Inline' } });
    expect(claims.exp - claims.iat).toBe(300);
    expect(out.stdout).toContain('src="http://localhost:8787/analytics-chart.js"');
    // A session-bound id cannot be embedded: no iframe, no embed URL.
    expect(out.stdout).not.toContain('<iframe');
    expect(out.stdout).not.toContain('/embed/');
  });

  it.each([
    [
      ['sign', '--query', 'signups', '--param', 'tenant=acme', '--param', 'plan=pro'],
      /needs --public .* or --subject/,
    ],
    [['sign', '--query', 'nope', '--public', '--keys', 'keys.txt'], /no query named 'nope'/],
    [
      [
        'sign',
        '--query',
        'signups',
        '--param',
        'tenant=acme',
        '--param',
        'plan=gold',
        '--public',
        '--keys',
        'keys.txt',
      ],
      /'plan' expected one of "free", "pro"/,
    ],
    [['sign', '--query', 'signups', '--public'], /no signing keys/],
    [
      [
        'sign',
        '--query',
        'fine',
        '--public',
        '--config',
        'broken.config.mjs',
        '--keys',
        'keys.txt',
      ],
      /query "wrong": split: Bar Chart needs a split field/,
    ],
    [['launch'], /unknown command 'launch'/],
    [['sign', '--bogus'], /sign: Unknown option '--bogus'.*sign --help/],
    [['inspect'], /inspect needs the id/],
    [['keygen', '--kid', 'a b'], /--kid uses 1-64 of/],
    [['serve', '--port', 'eighty'], /--port must be 0-65535, not 'eighty'/],
    [['serve', '--config', 'missing.json'], /missing\.json does not exist/],
    [['serve', '--config', 'typo.json'], /Unrecognized key: "allowedOrigin"/],
    [['serve', '--config', 'not-json.json'], /not-json\.json is not JSON/],
    [['serve', '--config', 'serve.json'], /ANALYTICS_BASE_URL is not set/],
    [['check', '--config', 'serve.json'], /^analytics-edge: ANALYTICS_API_KEY is not set/],
  ])('fails with one clear sentence (%#)', async (args, message) => {
    const out = await edge(args);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/^analytics-edge: [^\n]+\n$/);
    // The library names itself in its errors; the command does not say it twice.
    expect(out.stderr).not.toMatch(/analytics.edge: analytics.edge/i);
    expect(out.stderr).toMatch(message);
    expect(out.stderr).not.toMatch(/\n\s+at /);
  });
});

it('without a config, names every file it looked for', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'edge-cli-empty-'));
  try {
    const out = await edge(['sign', '--query', 'x', '--public'], {}, empty);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(
      'analytics-edge.config.ts, analytics-edge.config.mts, analytics-edge.config.js, analytics-edge.config.mjs, analytics-edge.config.json',
    );
    expect(out.stderr).toContain('pass --config FILE, a .json file on any Node');
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});

describe('pnpm edge serve', () => {
  it('serves a JavaScript config module (with its own backend) until SIGTERM', async () => {
    writeFileSync(
      join(dir, 'serve.config.mjs'),
      `export default {
  queries: { total: { query: { graph_type: 'Single Value', start: '1 day ago', end: 'now' } } },
  backend: { query: async () => ({ result: [{ value: 7 }], metadata: {} }) },
};
`,
    );
    const child = serve('serve.config.mjs');
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk;
        const m =
          /listening on (http:\/\/\S+) \(1 queries from .*serve\.config\.mjs; backend from the config; no session check/.exec(
            out,
          );
        if (m?.[1]) resolve(m[1]);
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    const exited = new Promise<number | null>((done) => child.once('exit', done));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 30_000);
});

describe('pnpm edge check', () => {
  const apiKey = 'cli-check-key';
  let service: AnalyticsBackend;
  beforeAll(async () => {
    service = await startAnalyticsBackend(apiKey);
    // As a newcomer once wrote it from the README: `events`, where demo data and ingest write
    // `all_events` by default.
    writeFileSync(
      join(dir, 'wrong-collection.json'),
      JSON.stringify({
        queries: {
          visits: { query: { graph_type: 'Single Line', start: '7 days ago', end: 'now' } },
          signups: {
            query: {
              collection: 'events',
              graph_type: 'Single Line',
              start: '7 days ago',
              end: 'now',
            },
          },
        },
      }),
    );
    writeFileSync(
      join(dir, 'right-collection.json'),
      JSON.stringify({
        queries: {
          byPage: {
            query: { graph_type: 'Bar Chart', split: 'page', start: '7 days ago', end: 'now' },
          },
        },
      }),
    );
  });
  afterAll(() => service.close());

  it('exits 1 naming a collection the workspace lacks, and passes a config that fits', async () => {
    const env = { ANALYTICS_BASE_URL: service.url, ANALYTICS_API_KEY: apiKey };
    const wrong = await edge(['check', '--config', 'wrong-collection.json'], env);
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toContain('✓ query "visits"');
    expect(wrong.stdout).toMatch(
      /✗ query "signups": reads collection 'events', which the workspace does not have \(it has: all_events\)/,
    );
    expect(wrong.stdout).toMatch(/1 error, 0 warnings\n$/);
    expect(wrong.stdout + wrong.stderr).not.toContain(apiKey);

    const right = await edge(['check', '--config', 'right-collection.json'], env);
    expect(right.code, right.stdout + right.stderr).toBe(0);
    expect(right.stdout).toContain('Every query runs');
  }, 30_000);

  it('serve warns at start-up about the collection, and serves anyway', async () => {
    const child = serve('wrong-collection.json', {
      ANALYTICS_BASE_URL: service.url,
      ANALYTICS_API_KEY: apiKey,
    });
    try {
      let err = '';
      const warned = await new Promise<string>((resolve, reject) => {
        child.stderr.on('data', (chunk: Buffer) => {
          err += chunk;
          if (/checks every query\n/.test(err)) resolve(err);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
      });
      expect(warned).toMatch(
        /^analytics-edge: warning: query "signups": reads collection 'events', which the workspace does not have/m,
      );
      expect(warned).not.toMatch(/visits/);
      expect(warned).not.toContain(apiKey);
    } finally {
      child.kill('SIGTERM');
    }
  }, 30_000);
});
