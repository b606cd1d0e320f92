import { spawn } from 'node:child_process';

/** Runs a command to completion; rejects with its output when it exits non-zero. */
export function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    // vitest sets NODE_ENV=test, which would make Vite build the apps in development mode.
    const { NODE_ENV: _, ...inherited } = process.env;
    const child = spawn(command, args, { cwd, env: { ...inherited, ...env } });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

/** Like `run`, but a non-zero exit is an error carrying the command's output. */
export async function mustRun(
  command: string,
  args: string[],
  cwd: string,
  env?: NodeJS.ProcessEnv,
): Promise<string> {
  const { code, output } = await run(command, args, cwd, env);
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${code}:\n${output}`);
  return output;
}
