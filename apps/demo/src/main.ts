/**
 * `pnpm start`: the whole system on this machine with no configuration. Creates development
 * secrets and the demo workspace under `.data/` when missing, then serves the engine, the edge,
 * the host-app example and the example pages from this one process until Ctrl-C.
 */
import { relative } from 'node:path';
import { demoSettings } from './demo-settings.ts';
import { elementBundlePath } from './element-bundle.ts';
import { ensureDemoData } from './ensure-demo-data.ts';
import { ensureDevSecrets } from './ensure-dev-secrets.ts';
import { type RunningDemo, startDemo } from './start-demo.ts';

const say = (line: string) => process.stdout.write(`${line}\n`);
const shown = (path: string) => {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
};

async function main(): Promise<void> {
  const settings = demoSettings(process.env, process.argv.slice(2));
  // Fails now, with what to run, rather than serving a page whose charts never load.
  elementBundlePath();
  const secrets = ensureDevSecrets(settings.dataDir, process.env);
  if (secrets.created.length) {
    say('Created development secrets (git-ignored; production sets these in the environment):');
    for (const path of secrets.created) say(`  ${shown(path)}`);
  }
  if (secrets.fromEnv.length) say(`Using ${secrets.fromEnv.join(', ')} from the environment.`);
  const data = await ensureDemoData({
    dataDir: settings.dataDir,
    events: settings.events,
    maxAgeHours: settings.dataMaxAgeHours,
    fresh: settings.fresh,
    say,
  });

  const demo: RunningDemo = await startDemo({
    host: settings.host,
    port: settings.port,
    portFallback: settings.portIsDefault,
    examplesPort: settings.examplesPort,
    examplesPortFallback: settings.examplesPortIsDefault,
    enginePort: settings.enginePort,
    dataDir: settings.dataDir,
    apiKey: secrets.apiKey,
    signingKeys: secrets.signingKeys,
    sessionSecret: secrets.sessionSecret,
    demoPassword: settings.demoPassword,
    idTtl: settings.idTtl,
    secureCookies: settings.secureCookies,
    logLevel: settings.logLevel,
    revokedIds: settings.revokedIds,
    allowedOrigins: settings.allowedOrigins,
  });

  say('');
  say(`  analytics-chart demo  ▸  ${demo.url}`);
  say('');
  say(`  Sign in as ${demo.logins.join(' or ')}, password: ${settings.demoPassword}`);
  say(`  Example pages (another origin, public ids): ${demo.examplesUrl}`);
  if (demo.engineUrl) say(`  Engine API (ENGINE_PORT): ${demo.engineUrl}/api/visualize/data`);
  if (data.generatedAt)
    say(
      `  Demo data: 90 days up to ${data.generatedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    );
  say(`  Data and development secrets: ${shown(settings.dataDir)}`);
  say('');
  say('  Ctrl-C to stop.');
  if (settings.readyJson) {
    say(
      JSON.stringify({
        ready: {
          url: demo.url,
          examplesUrl: demo.examplesUrl,
          engineUrl: demo.engineUrl,
          edgeUrl: demo.edgeUrl,
        },
      }),
    );
  }

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    say(`\n${signal === 'SIGINT' ? 'Ctrl-C' : signal}: stopping…`);
    demo.close().then(
      () => {
        say('Stopped.');
        process.exit(0);
      },
      (error: unknown) => {
        process.stderr.write(`Could not stop cleanly: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`\npnpm start: ${(error as Error).message ?? String(error)}\n`);
  process.exit(1);
});
