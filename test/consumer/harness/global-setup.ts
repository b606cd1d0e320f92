/**
 * Global setup of the consumer suite: packs every package, installs the engine from its tarball
 * into a scratch project outside the workspace, prepares data with the engine README's quick
 * start plus the suite's own events (`analytics-engine load`), and serves it for every scenario.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import type { ConsumerContext } from './context.ts';
import { consumerEvents } from './events.ts';
import { packAll } from './pack.ts';
import { runOk, type Started, startProcess } from './processes.ts';
import { readmeBlock, shellLine } from './readme.ts';
import { scratchProject } from './scratch.ts';

let engine: Started | undefined;
let root = '';

export default async function setup(project: TestProject) {
  root = mkdtempSync(join(tmpdir(), 'analytics-chart-consumer-'));
  const tarballs = await packAll(join(root, 'tarballs'));
  const dir = await scratchProject(root, tarballs, 'engine-service');

  // The engine README's quick start, line by line, as a user would type it (the install line
  // is what scratchProject just did with the tarballs).
  const lines = readmeBlock('engine', 'quick-start')
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('#') && !line.startsWith('npm install'));
  const serveLine = lines.find((line) => line.includes('analytics-engine serve'));
  if (!serveLine) throw new Error('the engine quick start has no analytics-engine serve line');
  for (const line of lines.filter((l) => l !== serveLine)) {
    const { env, argv } = shellLine(line);
    await runOk(argv[0] as string, argv.slice(1), { cwd: dir, env });
  }

  const events = consumerEvents(Math.floor(Date.now() / 1000));
  writeFileSync(join(dir, 'events.ndjson'), `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);
  await runOk(
    'npx',
    ['--no', 'analytics-engine', 'load', '--collection', 'events', 'events.ndjson'],
    {
      cwd: dir,
    },
  );

  // The serve line as written, on a free port instead of the default one.
  const { env, argv } = shellLine(serveLine);
  const apiKey = env.ANALYTICS_API_KEY;
  if (!apiKey) throw new Error('the engine quick start serves without ANALYTICS_API_KEY');
  engine = await startProcess(argv[0] as string, [...argv.slice(1), '--port', '0'], {
    cwd: dir,
    env,
    ready: /listening on (http:\/\/\S+)/,
  });

  const context: ConsumerContext = {
    root,
    tarballs,
    engineUrl: engine.match[1] as string,
    apiKey,
    signingKeys: `consumer-1:${randomBytes(32).toString('base64url')}`,
    events,
  };
  project.provide('consumer', context);
  return async () => {
    await engine?.stop();
    if (!process.env.KEEP_CONSUMER_SCRATCH) rmSync(root, { recursive: true, force: true });
  };
}
