import { type ChildProcess, execFile, spawn } from 'node:child_process';

/**
 * The environment of a user's shell: this process's, without what pnpm sets for the script it
 * runs (npm_config_*, npm_package_*, INIT_CWD, PNPM_*), which npm would otherwise warn about or
 * act on, plus `extra`.
 */
export function userEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(npm_|pnpm_|INIT_CWD$)/i.test(name)) env[name] = value;
  }
  return { ...env, ...extra };
}

/** What a finished command wrote and how it ended. */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (no shell) and answers its output; never throws on a non-zero exit. */
export function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string | undefined>; timeoutMs?: number },
): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        cwd: options.cwd,
        env: userEnv(options.env),
        timeout: options.timeoutMs ?? 300_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Like {@link run}, but a non-zero exit throws with the command's output. */
export async function runOk(
  command: string,
  args: readonly string[],
  options: Parameters<typeof run>[2],
): Promise<RunResult> {
  const result = await run(command, args, options);
  if (result.code !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited ${result.code}\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result;
}

/** A long-running process started by {@link startProcess}. */
export interface Started {
  /** The first match of `ready` in its standard output. */
  match: RegExpExecArray;
  /** Everything it wrote so far, both streams. */
  output(): string;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/**
 * Starts a server process and waits until its standard output matches `ready` (e.g. the line
 * with its URL). Fails with the process's output if it exits first or takes longer than the
 * time limit.
 */
export function startProcess(
  command: string,
  args: readonly string[],
  options: {
    cwd: string;
    env?: Record<string, string | undefined>;
    ready: RegExp;
    timeoutMs?: number;
  },
): Promise<Started> {
  const child: ChildProcess = spawn(command, args, {
    cwd: options.cwd,
    env: userEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so stopping it also stops what it started (npx runs node under it).
    detached: true,
  });
  let stdout = '';
  let all = '';
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
    await exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${command} ${args.join(' ')} did not get ready:\n${all}`));
    }, options.timeoutMs ?? 60_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      all += chunk.toString();
      const match = options.ready.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve({ match, output: () => all, stop });
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      all += chunk.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(
        new Error(`${command} ${args.join(' ')} exited (${code}) before it was ready:\n${all}`),
      );
    });
  });
}
