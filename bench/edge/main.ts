/**
 * `pnpm bench edge`: the edge's hot path against a bare Hono route on the same server, and the
 * overhead of a cache miss over calling the backend directly. Loopback only, bounded in time
 * (about 90 s with the defaults).
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
import autocannon from 'autocannon';
import { median, quantile } from '../stats.ts';

interface Ready {
  url: string;
  backendUrl: string;
  publicId: string;
  nocacheId: string;
  embedId: string;
  sessionId: string;
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

async function startServer(): Promise<{ child: ChildProcess; ready: Ready }> {
  const child = fork(fileURLToPath(new URL('./server.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
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
  const { child, ready } = await startServer();
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
    ] as const) {
      await autocannon({ url, connections: 10, duration: 2, headers });
    }

    console.log('| run | req/s (mean) | p99 ms (median / worst) | server CPU µs/req | errors |');
    console.log('| --- | ---: | ---: | ---: | ---: |');
    const summary: string[] = [];
    for (const connections of [10, 50]) {
      const b: Slice[] = [];
      const e: Slice[] = [];
      for (let round = 0; round < rounds; round++) {
        // Alternate the order so neither target always runs second.
        if (round % 2 === 0) {
          b.push(await slice(bare, connections));
          e.push(await slice(data, connections, auth));
        } else {
          e.push(await slice(data, connections, auth));
          b.push(await slice(bare, connections));
        }
      }
      const row = (name: string, s: Slice[]) => {
        const mean = s.reduce((a, x) => a + x.rps, 0) / s.length;
        console.log(
          `| ${name}, ${connections} conn | ${Math.round(mean)} | ${median(s.map((x) => x.p99))} / ${Math.max(...s.map((x) => x.p99))} | ${median(s.map((x) => x.cpu)).toFixed(1)} | ${s.reduce((a, x) => a + x.errors, 0)} |`,
        );
      };
      row('bare Hono route, same bytes', b);
      row('edge, cached data (public id)', e);
      const ratios = b.map((x, i) => (e[i]?.rps ?? 0) / x.rps);
      const cpuRatio = median(b.map((x) => x.cpu)) / median(e.map((x) => x.cpu));
      summary.push(
        `${connections} conn: edge/bare req/s ratio median ${(median(ratios) * 100).toFixed(1)}% (rounds: ${ratios.map((r) => `${(r * 100).toFixed(0)}%`).join(' ')}); by server CPU per request ${(cpuRatio * 100).toFixed(1)}%; edge p99 median ${median(e.map((x) => x.p99))} ms`,
      );
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
    console.log('targets: ratio >= 70%, p99 < 10 ms at 50 connections');

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
    child.send('stop');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}
