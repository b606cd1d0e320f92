/**
 * `pnpm bench edge`: the edge's hot path against a bare Hono route on the same server, with its
 * state in this process and in a shared Redis (Debian's redis-server, started here on a free
 * port); how long a revocation takes to refuse the id on another replica; and the overhead of a
 * cache miss over calling the backend directly. Loopback only, bounded in time (about two minutes
 * with the defaults).
 *
 * The server runs in its own process. Runs of the bare route and of the edge alternate in short
 * slices, so drift and other load on the machine hit both alike; the ratio is taken per round and
 * the median reported, next to the server's own CPU time per request (which other processes
 * cannot inflate).
 *
 *   --duration S   seconds per slice (default 3)
 *   --rounds N     slices per target and connection count (default 4)
 */
import { type ChildProcess, fork } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { generateSigningKey } from '@analytics-chart/edge';
import { startRedis } from '@analytics-chart/test-kit/redis-server';
import autocannon from 'autocannon';
import { median, quantile } from '../stats.ts';

interface Ready {
  url: string;
  backendUrl: string;
  publicId: string;
  nocacheId: string;
  embedId: string;
  sessionId: string;
  redisId: string;
  cookie: string;
  backendBody: string;
  bytes: number;
}

interface Slice {
  rps: number;
  p99: number;
  errors: number;
  /** Server CPU microseconds per request. */
  cpu: number;
}

async function startServer(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; ready: Ready }> {
  const child = fork(fileURLToPath(new URL('./server.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<Ready>((resolve, reject) => {
    child.once('message', (m) => resolve(m as Ready));
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return { child, ready };
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { duration: { type: 'string' }, rounds: { type: 'string' } },
    strict: false,
  });
  const duration = Number(values.duration ?? 3);
  const rounds = Number(values.rounds ?? 4);
  const redis = await startRedis();
  const key = generateSigningKey();
  const env = { BENCH_REDIS_URL: redis.url, BENCH_SIGNING_KEY: `${key.kid}:${key.secret}` };
  const { child, ready } = await startServer(env);
  // A second replica sharing the Redis and the key: where the revocation must arrive.
  const replica = await startServer(env);
  const ask = <T>(message: unknown, field: string) =>
    new Promise<T>((resolve) => {
      const listener = (m: unknown) => {
        if (typeof m === 'object' && m !== null && field in m) {
          child.off('message', listener);
          resolve(m as T);
        }
      };
      child.on('message', listener);
      child.send(message as string);
    });
  const serverCpu = () =>
    new Promise<number>((resolve) => {
      child.once('message', (m) => {
        const { cpu } = m as { cpu: { user: number; system: number } };
        resolve(cpu.user + cpu.system);
      });
      child.send('cpu');
    });
  async function slice(
    url: string,
    connections: number,
    headers: Record<string, string> = {},
  ): Promise<Slice> {
    const before = await serverCpu();
    const result = await autocannon({ url, connections, duration, headers, pipelining: 1 });
    const after = await serverCpu();
    return {
      rps: result.requests.average,
      p99: result.latency.p99,
      errors: result.errors + result.timeouts + result.non2xx,
      cpu: (after - before) / Math.max(1, result.requests.total),
    };
  }
  try {
    const bare = `${ready.url}/bare`;
    const data = `${ready.url}/edge/api/data`;
    const auth = { authorization: `Bearer ${ready.publicId}` };
    const sessionUrl = `${ready.url}/session/api/data`;
    const session = { authorization: `Bearer ${ready.sessionId}`, cookie: ready.cookie };
    const embedUrl = `${ready.url}/embed/api/data`;
    const embed = { authorization: `Bearer ${ready.embedId}`, origin: 'https://blog.example' };
    const redisUrl = `${ready.url}/redis/api/data`;
    const redisAuth = { authorization: `Bearer ${ready.redisId}` };
    console.log(
      `machine: ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GB, Node ${process.version}, load average ${loadavg()[0]?.toFixed(2)}, ${new Date().toISOString().slice(0, 16)}Z`,
    );
    console.log(
      `payload: ${ready.bytes} bytes; ${rounds} alternating slices of ${duration} s per target; server in its own process\n`,
    );

    // Warm both paths (JIT, the result cache, the verified-id memory).
    for (const [url, headers] of [
      [bare, {}],
      [data, auth],
      [sessionUrl, session],
      [embedUrl, embed],
      [redisUrl, redisAuth],
    ] as const) {
      await autocannon({ url, connections: 10, duration: 2, headers });
    }

    console.log('| run | req/s (mean) | p99 ms (median / worst) | server CPU µs/req | errors |');
    console.log('| --- | ---: | ---: | ---: | ---: |');
    const summary: string[] = [];
    for (const connections of [10, 50]) {
      const b: Slice[] = [];
      const e: Slice[] = [];
      const r: Slice[] = [];
      for (let round = 0; round < rounds; round++) {
        // Rotate the order so no target always runs first or last.
        const targets = [
          async () => b.push(await slice(bare, connections)),
          async () => e.push(await slice(data, connections, auth)),
          async () => r.push(await slice(redisUrl, connections, redisAuth)),
        ];
        for (let t = 0; t < targets.length; t++) await targets[(t + round) % targets.length]?.();
      }
      const row = (name: string, s: Slice[]) => {
        const mean = s.reduce((a, x) => a + x.rps, 0) / s.length;
        console.log(
          `| ${name}, ${connections} conn | ${Math.round(mean)} | ${median(s.map((x) => x.p99))} / ${Math.max(...s.map((x) => x.p99))} | ${median(s.map((x) => x.cpu)).toFixed(1)} | ${s.reduce((a, x) => a + x.errors, 0)} |`,
        );
      };
      row('bare Hono route, same bytes', b);
      row('edge, cached data (public id)', e);
      row('edge with its state in Redis, cached data (public id)', r);
      const versus = (name: string, s: Slice[]) => {
        const ratios = b.map((x, i) => (s[i]?.rps ?? 0) / x.rps);
        const cpuRatio = median(b.map((x) => x.cpu)) / median(s.map((x) => x.cpu));
        return `${connections} conn: ${name}/bare req/s ratio median ${(median(ratios) * 100).toFixed(1)}% (rounds: ${ratios.map((x) => `${(x * 100).toFixed(0)}%`).join(' ')}); by server CPU per request ${(cpuRatio * 100).toFixed(1)}%; ${name} p99 median ${median(s.map((x) => x.p99))} ms`;
      };
      summary.push(versus('edge', e), versus('edge+Redis', r));
    }
    const s = await slice(sessionUrl, 10, session);
    console.log(
      `| edge, cached data (session id + jwtSession cookie), 10 conn | ${Math.round(s.rps)} | ${s.p99} | ${s.cpu.toFixed(1)} | ${s.errors} |`,
    );
    const x = await slice(embedUrl, 10, embed);
    console.log(
      `| edge, cached data (public id embedded on another origin, CORS), 10 conn | ${Math.round(x.rps)} | ${x.p99} | ${x.cpu.toFixed(1)} | ${x.errors} |`,
    );
    console.log(`\n${summary.join('\n')}`);
    console.log(
      'targets at 50 connections: edge ratio >= 70%, edge+Redis ratio >= 60%, p99 < 10 ms',
    );

    // Revocation: revoked on one replica, asked on the other until it refuses.
    const propagation: number[] = [];
    for (let i = 0; i < 20; i++) {
      const { minted, jti } = await ask<{ minted: string; jti: string }>('mint', 'minted');
      const headers = { authorization: `Bearer ${minted}` };
      const other = `${replica.ready.url}/redis/api/data`;
      const before = await fetch(other, { headers });
      await before.arrayBuffer();
      if (before.status !== 200)
        throw new Error(`replica answered ${before.status} before revoking`);
      const t0 = performance.now();
      const revoked = ask<unknown>({ revoke: jti }, 'revoked');
      for (;;) {
        const answer = await fetch(other, { headers });
        await answer.arrayBuffer();
        if (answer.status !== 200) break;
        if (performance.now() - t0 > 5000)
          throw new Error('the revocation never reached the replica');
      }
      propagation.push(performance.now() - t0);
      await revoked;
    }
    console.log(
      `\nrevocation on one replica until another refuses the id (Redis pub/sub), 20 runs: median ${median(propagation).toFixed(2)} ms, worst ${Math.max(...propagation).toFixed(2)} ms (target < 1000 ms)`,
    );

    // Cache miss: the edge with caching off against a direct POST to the backend, interleaved.
    const direct: number[] = [];
    const viaEdge: number[] = [];
    const nocache = { authorization: `Bearer ${ready.nocacheId}` };
    for (let i = 0; i < 1100; i++) {
      const t0 = performance.now();
      const a = await fetch(`${ready.backendUrl}/api/visualize/data`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: ready.backendBody,
      });
      await a.arrayBuffer();
      const t1 = performance.now();
      const b = await fetch(`${ready.url}/nocache/api/data`, { headers: nocache });
      await b.arrayBuffer();
      const t2 = performance.now();
      if (a.status !== 200 || b.status !== 200) {
        throw new Error(`cache-miss run failed: ${a.status}/${b.status}`);
      }
      if (i >= 100) {
        direct.push(t1 - t0);
        viaEdge.push(t2 - t1);
      }
    }
    const overhead = median(viaEdge) - median(direct);
    console.log(
      `\ncache miss, 1000 sequential requests each after 100 warm-up: direct backend median ${median(direct).toFixed(3)} ms (p90 ${quantile(direct, 0.9).toFixed(3)}); through the edge, caching off, median ${median(viaEdge).toFixed(3)} ms (p90 ${quantile(viaEdge, 0.9).toFixed(3)})`,
    );
    console.log(`cache-miss median overhead: ${overhead.toFixed(3)} ms (target < 2 ms)`);
  } finally {
    for (const c of [child, replica.child]) {
      c.send('stop');
      await new Promise((resolve) => c.once('exit', resolve));
    }
    await redis.stop();
  }
}
