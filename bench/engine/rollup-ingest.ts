/**
 * Ingest with rollups on against off (issue 37: on at least 0.85× the rate of off), on DuckDB or
 * on a ClickHouse (`clickhouse`: its URL; each side then serves a workspace database of its own).
 * Fresh `engine serve`s, one keeping rollups by `event` and `plan` with the sums of `price`, are
 * sent the same `/api/bulk-log` batches of 1,000 demo events over eight connections, in rounds
 * that measure each build's off and on back to back, which first alternating and the builds'
 * order rotating, so that a busy machine's drift reaches every side alike. Each side's
 * figure is the median of its rounds' rates; the ratio is the median of the rounds' own ratios
 * (the two sides of one build measured minutes apart would compare the machine, not the code),
 * and each side's CPU per event is printed beside it, the steadier figure on a busy machine.
 * `main.ts` runs it in the full run and alone (`--rollup-ingest-only`), where another build's
 * bin (`--other-engine`) may take part in the same rounds, for a before and after.
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { demoEvents } from '@analytics-chart/engine';
import { median } from '../stats.ts';

/** The rollups the "on" side keeps, as the scale run's. */
export const ROLLUP_FLAGS = ['--rollup-keys', 'event,plan', '--rollup-sums', 'price'];
/** Events per side and round. */
export const ROUND_EVENTS = 20_000;
const KEY = 'bench-key';
const BATCH = 1000;
const CONNECTIONS = 8;
/** Batches each side takes before the first round: the collection, and compiled code. */
const WARM_UP_BATCHES = 20;

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/** What `main.ts` lends this section: its child processes, started the same way. */
export interface RollupIngestTools {
  /** `analytics-engine …` of the installed CLI, or of `bin`. */
  engine(args: string[], env?: Record<string, string>, bin?: string): ChildProcess;
  listening(child: ChildProcess): Promise<string>;
  /** POSTs a body over a keep-alive agent; resolves with the text of a 200. */
  post(agent: Agent, url: string, body: string): Promise<string>;
  /** CPU seconds a running process has used so far; NaN where unknown. */
  cpu(pid: number): number;
}

/** One build measured: its bin (the installed CLI when unset) and its name in the figures. */
export interface IngestBuild {
  name: string;
  bin?: string;
}

/** One build's figures: each side's median rate, and the median of its rounds' ratios. */
export interface BuildIngest {
  name: string;
  /** Events per second, median of the rounds. */
  off: number;
  on: number;
  /**
   * CPU microseconds of the serving process (and of ClickHouse's server, on ClickHouse) per
   * event over all rounds (the kernel counts in
   * hundredths of a second, too coarse for one round's figure); off/on is the rate ratio a
   * server bound by its own CPU would have, which other processes' load disturbs far less.
   */
  offCpu: number;
  onCpu: number;
  /** Median of each round's on/off rate. */
  ratio: number;
}

/**
 * Runs `rounds` rounds of {@link ROUND_EVENTS} events into an off and an on serve of each build,
 * under `dir`, and stops the serves again. `now` is the batches' one timestamp.
 */
export async function measureRollupIngest(
  tools: RollupIngestTools,
  options: {
    dir: string;
    builds: IngestBuild[];
    rounds: number;
    now: number;
    /** ClickHouse's URL and its server's pid, whose CPU each side's figure then includes. */
    clickhouse?: { url: string; pid: number };
  },
): Promise<{ events: number; builds: BuildIngest[] }> {
  const { dir, builds, rounds, now, clickhouse } = options;
  const sides = builds.flatMap((build, b) =>
    (['off', 'on'] as const).map((kind) => {
      const name = `ingest-${b}-${kind}`;
      let storage = ['--data', join(dir, name)];
      if (clickhouse) {
        // A workspace (a ClickHouse database) per side, each with the same key.
        const workspaces = join(dir, `${name}.json`);
        writeFileSync(workspaces, JSON.stringify({ [`rollup_${name.replaceAll('-', '_')}`]: KEY }));
        storage = ['--clickhouse', clickhouse.url, '--workspaces', workspaces];
      }
      const child = tools.engine(
        ['serve', '--port', '0', ...storage, ...(kind === 'on' ? ROLLUP_FLAGS : [])],
        clickhouse
          ? { CLICKHOUSE_USER: 'default', CLICKHOUSE_PASSWORD: '' }
          : { ANALYTICS_API_KEY: KEY },
        build.bin,
      );
      return { build: b, kind, child, url: '', rates: [] as number[], cpu: [] as number[] };
    }),
  );
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  try {
    await Promise.all(
      sides.map(async (side) => {
        side.url = await tools.listening(side.child);
      }),
    );
    const perRound = ROUND_EVENTS / BATCH;
    const bodies: string[] = [];
    let list: string[] = [];
    for (const { payload } of demoEvents(
      ROUND_EVENTS * rounds + WARM_UP_BATCHES * BATCH,
      13,
      now,
    )) {
      list.push(payload);
      if (list.length === BATCH) {
        bodies.push(
          JSON.stringify({
            api_key: KEY,
            collection: 'rollup_ingest',
            timestamp: now,
            jsons: list,
          }),
        );
        list = [];
      }
    }
    const send = async (url: string, batches: string[]) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (next < batches.length) {
            await tools.post(agent, `${url}/api/bulk-log`, batches[next++] as string);
          }
        }),
      );
    };
    for (const side of sides) await send(side.url, bodies.slice(0, WARM_UP_BATCHES));
    for (let r = 0; r < rounds; r++) {
      const start = WARM_UP_BATCHES + r * perRound;
      const round = bodies.slice(start, start + perRound);
      // Each build's off and on side by side, so that a round's ratio compares moments apart;
      // the builds' order rotates and which of the two goes first alternates.
      const order = builds.flatMap((_, i) => {
        const b = (i + r) % builds.length;
        const pair = sides.filter((side) => side.build === b);
        return (r + b) % 2 ? pair.reverse() : pair;
      });
      for (const side of order) {
        const pids = [side.child.pid as number, ...(clickhouse ? [clickhouse.pid] : [])];
        const cpu = sum(pids.map(tools.cpu));
        const s = performance.now();
        await send(side.url, round);
        const seconds = (performance.now() - s) / 1000;
        side.rates.push(ROUND_EVENTS / seconds);
        side.cpu.push(sum(pids.map(tools.cpu)) - cpu);
      }
    }
  } finally {
    agent.destroy();
    await Promise.all(
      sides.map(
        (side) =>
          new Promise<void>((resolve) => {
            if (side.child.exitCode !== null || side.child.signalCode !== null) resolve();
            else {
              side.child.once('exit', () => resolve());
              side.child.kill('SIGTERM');
            }
          }),
      ),
    );
  }
  return {
    events: ROUND_EVENTS * rounds,
    builds: builds.map((build, b) => {
      const off = sides.find((s) => s.build === b && s.kind === 'off') as (typeof sides)[number];
      const on = sides.find((s) => s.build === b && s.kind === 'on') as (typeof sides)[number];
      return {
        name: build.name,
        off: Math.round(median(off.rates)),
        on: Math.round(median(on.rates)),
        offCpu: (sum(off.cpu) / (ROUND_EVENTS * rounds)) * 1e6,
        onCpu: (sum(on.cpu) / (ROUND_EVENTS * rounds)) * 1e6,
        ratio: median(on.rates.map((rate, r) => rate / (off.rates[r] as number))),
      };
    }),
  };
}
