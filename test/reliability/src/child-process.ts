/**
 * A server started as a real child process: waits for the line announcing its URL, keeps its
 * output (to search it for secrets), and stops it gracefully or with SIGKILL.
 */
import { type ChildProcess, spawn } from 'node:child_process';

/** A running server process. */
export interface ServerProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** `kill -9`: no chance to flush, close or clean up. Resolves once the process is gone. */
  kill9(): Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`. Resolves with the exit code (null when killed). */
  stop(graceMs?: number): Promise<number | null>;
}

/** Options of {@link startServerProcess}. */
export interface StartOptions {
  command: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Matches the line that announces the server; group 1 is its URL. */
  ready: RegExp;
  /** Open an IPC channel to the child (for `heapAfterGc` in `heap-probe.ts`). @default false */
  ipc?: boolean;
  /** Give up after this many milliseconds. @default 30000 */
  timeoutMs?: number;
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** Spawns the process and resolves once it printed its ready line. */
export function startServerProcess(options: StartOptions): Promise<ServerProcess> {
  const child = spawn(options.command, [...options.args], {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no ready line within ${options.timeoutMs ?? 30_000} ms:\n${output}`));
    }, options.timeoutMs ?? 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = options.ready.exec(output);
      if (match?.[1] && child.pid !== undefined) {
        clearTimeout(timer);
        child.off('exit', onExit);
        resolve({
          url: match[1],
          pid: child.pid,
          child,
          output: () => output,
          async kill9() {
            child.kill('SIGKILL');
            await exited(child);
          },
          async stop(graceMs = 10_000) {
            if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
            const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
            child.kill('SIGTERM');
            const code = await exited(child);
            clearTimeout(force);
            return code;
          },
        });
      }
    };
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before it was ready:\n${output}`));
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
