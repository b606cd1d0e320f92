import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository's `pnpm start` entry. */
const START_SCRIPT = fileURLToPath(new URL('../../../../scripts/start.mjs', import.meta.url));

/** The demo as a real child process: `node scripts/start.mjs`, exactly what `pnpm start` runs. */
export interface DemoProcess {
  url: string;
  examplesUrl: string;
  engineUrl: string;
  edgeUrl: string;
  /** Everything it printed so far, stdout and stderr interleaved. */
  output(): string;
  /** Sends SIGINT (Ctrl-C) and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * The settings every test run of the demo shares: loopback, free ports (the engine's API too),
 * and its data in `dataDir`, generated once and never regenerated for its age.
 */
export function demoOnFreePorts(dataDir: string): Record<string, string> {
  return {
    HOST: '127.0.0.1',
    PORT: '0',
    EXAMPLES_PORT: '0',
    ENGINE_PORT: '0',
    DEMO_DATA_DIR: dataDir,
    DEMO_DATA_MAX_AGE_HOURS: '0',
  };
}

interface ReadyLine {
  ready: { url: string; examplesUrl: string; engineUrl?: string; edgeUrl: string };
}

/**
 * Starts the demo with the given environment (on top of this process's) and resolves once it
 * printed its ready line; rejects with its output if it exits or takes longer than `timeoutMs`.
 */
export function startDemoProcess(
  env: Record<string, string>,
  timeoutMs = 150_000,
): Promise<DemoProcess> {
  const child: ChildProcess = spawn(process.execPath, [START_SCRIPT], {
    env: { ...process.env, ...env, DEMO_READY_JSON: '1', FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the demo did not start within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      for (const line of output.split('\n')) {
        if (!line.startsWith('{"ready":')) continue;
        const { ready } = JSON.parse(line) as ReadyLine;
        clearTimeout(timer);
        if (!ready.engineUrl) {
          reject(new Error('the demo serves no engine API; set ENGINE_PORT'));
          return;
        }
        const engineUrl = ready.engineUrl;
        child.stdout?.off('data', onData);
        child.stdout?.on('data', (more: Buffer) => {
          output += more.toString('utf8');
        });
        resolve({
          url: ready.url,
          examplesUrl: ready.examplesUrl,
          engineUrl,
          edgeUrl: ready.edgeUrl,
          output: () => output,
          stop: async () => {
            if (child.exitCode === null) child.kill('SIGINT');
            return exited;
          },
        });
        return;
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the demo exited with code ${code} before it was ready:\n${output}`));
    });
  });
}
