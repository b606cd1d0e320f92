/**
 * The edge without writing code, for a host app in any language: `npx analytics-edge serve`
 * with a JSON config, the HTTP backend to the engine and the forwarded-cookie session check;
 * and both CLIs as an npm install provides them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startEdgeService } from '../harness/edge-service.ts';
import { countSignups } from '../harness/events.ts';
import { type Payload, payloadTotal } from '../harness/payload.ts';
import { run, runOk } from '../harness/processes.ts';
import { readmeBlock } from '../harness/readme.ts';
import { fixturePath, installed } from '../harness/scratch.ts';
import { sessionEndpoint } from '../harness/session-endpoint.ts';

const { root, apiKey, signingKeys, events } = inject('consumer');
let dir = '';
let edge: Awaited<ReturnType<typeof startEdgeService>> | undefined;
let sessions: Awaited<ReturnType<typeof sessionEndpoint>> | undefined;

beforeAll(async () => {
  dir = await installed('edge-service');
  writeFileSync(join(dir, 'registry.ts'), 'export default { queries: {} } as const;\n');
  sessions = await sessionEndpoint({ s3cr3t: { subject: 'carol', tenant: 'globex' } });
  edge = await startEdgeService(dir, { EDGE_SESSION_URL: sessions.url });
});
afterAll(async () => {
  await edge?.process.stop();
  await sessions?.close();
});

describe('analytics-edge serve --config FILE.json', () => {
  it('is the edge README example', () => {
    expect(readFileSync(fixturePath('edge-service/analytics-edge.config.json'), 'utf8')).toBe(
      readmeBlock('edge', 'edge-service/analytics-edge.config.json'),
    );
  });

  it('signs for a session the host vouches for, and answers that tenant data', async () => {
    const url = edge?.url ?? '';
    const sign = (cookie?: string) =>
      fetch(`${url}/api/sign`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
        body: JSON.stringify({ query: 'signups-per-day' }),
      });
    expect((await sign()).status).toBe(401);
    expect((await sign('sessionid=forged')).status).toBe(401);
    const signed = await sign('sessionid=s3cr3t');
    expect(signed.status).toBe(200);
    const { id } = (await signed.json()) as { id: string };

    const data = await fetch(`${url}/api/data`, {
      headers: { authorization: `Bearer ${id}`, cookie: 'sessionid=s3cr3t' },
    });
    expect(data.status).toBe(200);
    const body = await data.text();
    expect(body).not.toContain(apiKey);
    expect(payloadTotal(JSON.parse(body) as Payload)).toBe(countSignups(events, 'globex'));
    expect(edge?.process.output()).toContain(`sessions from ${sessions?.url}`);
  });

  it('analytics-edge check passes the README config against the engine, and fails a wrong collection', async () => {
    const env = { ANALYTICS_BASE_URL: inject('consumer').engineUrl, ANALYTICS_API_KEY: apiKey };
    const ok = await run(
      'npx',
      ['--no', 'analytics-edge', 'check', '--config', 'analytics-edge.config.json'],
      {
        cwd: dir,
        env,
      },
    );
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toContain('✓ query "signups-per-day"');
    // The same config as a newcomer wrote it with the demo data's default collection in mind.
    const config = JSON.parse(readFileSync(join(dir, 'analytics-edge.config.json'), 'utf8'));
    config.queries['signups-per-day'].query.collection = 'signups';
    writeFileSync(join(dir, 'wrong-collection.json'), JSON.stringify(config));
    const wrong = await run(
      'npx',
      ['--no', 'analytics-edge', 'check', '--config', 'wrong-collection.json'],
      {
        cwd: dir,
        env,
      },
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toMatch(
      /✗ query "signups-per-day": reads collection 'signups', which the workspace does not have \(it has: [^)]*\bevents\b/,
    );
    expect(wrong.stdout + wrong.stderr).not.toContain(apiKey);
  });

  it('serves the installed element bundle', async () => {
    const served = await fetch(`${edge?.url}/analytics-chart.js`);
    expect(served.status).toBe(200);
    expect(await served.text()).toBe(
      readFileSync(
        join(dir, 'node_modules/@analytics-chart/element/dist/analytics-chart.js'),
        'utf8',
      ),
    );
  });
});

describe('the CLIs after npm install', () => {
  it('analytics-edge keygen, sign and inspect make an id the running edge answers', async () => {
    const keygen = await runOk('npx', ['--no', 'analytics-edge', 'keygen', '--kid', 'ops'], {
      cwd: dir,
    });
    expect(keygen.stdout).toMatch(/^ {2}EDGE_SIGNING_KEYS=ops:[A-Za-z0-9_-]{43}$/m);

    const env = { EDGE_SIGNING_KEYS: signingKeys, NODE_OPTIONS: '' };
    const signed = await runOk(
      'npx',
      [
        '--no',
        'analytics-edge',
        'sign',
        '--public',
        '--query',
        'signups-all-tenants',
        '--config',
        'analytics-edge.config.json',
      ],
      { cwd: dir, env },
    );
    const id = /^(eyJ[\w-]+\.[\w-]+\.[\w-]+)$/m.exec(signed.stdout)?.[1] ?? '';
    expect(id).not.toBe('');
    const inspected = await runOk('npx', ['--no', 'analytics-edge', 'inspect', id], {
      cwd: dir,
      env,
    });
    expect(inspected.stdout).toContain('signature: valid');

    const data = await fetch(`${edge?.url}/api/data`, {
      headers: { authorization: `Bearer ${id}` },
    });
    expect(data.status).toBe(200);
    expect(payloadTotal((await data.json()) as Payload)).toBe(countSignups(events));
  });

  it.each([
    ['analytics-edge', ['keygen', 'sign', 'inspect', 'serve']],
    ['analytics-engine', ['serve', 'load', 'demo-data']],
  ] as const)('%s answers --help on every command', async (bin, commands) => {
    const cwd = bin === 'analytics-edge' ? dir : join(root, 'engine-service');
    for (const command of commands) {
      const help = await runOk('npx', ['--no', bin, command, '--help'], { cwd });
      expect(help.stdout, `${bin} ${command} --help`).toContain(command);
    }
  });

  // Each case is its own short process and reads nothing the others write: they run side by side.
  it.concurrent.for([
    ['analytics-edge', ['sign', '--frobnicate']],
    ['analytics-edge', ['serve', '--config', 'nowhere.json']],
    ['analytics-edge', ['inspect', 'not-a-jwt']],
    ['analytics-edge', ['deploy']],
    ['analytics-edge', ['serve', '--config', 'registry.ts']],
    ['analytics-engine', ['serve', '--port']],
    ['analytics-engine', ['load', 'nowhere.ndjson']],
    ['analytics-engine', ['demo-data', '--events', 'lots']],
  ] as const)('%s %j fails with one line', async ([bin, args], { expect }) => {
    const cwd = bin === 'analytics-edge' ? dir : join(root, 'engine-service');
    const result = await run('npx', ['--no', bin, ...args], { cwd, env: { NODE_OPTIONS: '' } });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(new RegExp(`^${bin}[^\\n]*: [^\\n]+\\n$`));
    const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
    if (
      (args as readonly string[]).includes('registry.ts') &&
      (major < 23 || (major === 23 && minor < 6))
    ) {
      // This Node cannot load TypeScript: the line says so and what to use instead.
      expect(result.stderr).toMatch(
        /cannot load the TypeScript config .*use a \.json or \.js config/,
      );
    }
  });
});
