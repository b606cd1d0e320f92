import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

/** Debian's redis-server, started in a temporary directory, stopped (and restarted) by pid. */
export interface RedisServer {
  url: string;
  port: number;
  dir: string;
  /** SIGKILL: the server dies as in a crash; only what AOF has written survives. */
  kill(): Promise<void>;
  /** SIGSTOP / SIGCONT: the server keeps its sockets but answers nothing (a slow Redis). */
  pause(): void;
  resume(): void;
  /** Starts it again on the same port and directory. */
  restart(): Promise<void>;
  /** Stops it and removes the directory. */
  stop(): Promise<void>;
}

/** Starts redis-server on a free port; `aof` turns on append-only persistence with fsync always. */
export async function startRedis(options: { aof?: boolean } = {}): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'edge-redis-'));
  const port = await freePort();
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    ...(options.aof ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
  ];
  let child: ChildProcess | undefined;
  const launch = () =>
    new Promise<void>((resolve, reject) => {
      const started = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      child = started;
      let out = '';
      const timer = setTimeout(
        () => reject(new Error(`redis-server did not start: ${out}`)),
        10_000,
      );
      started.stdout?.on('data', (chunk: Buffer) => {
        out += chunk;
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      started.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited ${code}: ${out}`));
      });
    });
  const exit = () =>
    new Promise<void>((resolve) => {
      const running = child;
      if (!running || running.exitCode !== null || running.signalCode !== null) return resolve();
      running.once('exit', () => resolve());
      running.kill('SIGKILL');
    });
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    kill: exit,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    restart: launch,
    async stop() {
      child?.kill('SIGCONT');
      await exit();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
