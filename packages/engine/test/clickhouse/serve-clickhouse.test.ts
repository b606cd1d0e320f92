import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';

/**
 * `analytics-engine serve --clickhouse URL` as users run it: two engine processes on one
 * ClickHouse answer the same data, and one killed mid-ingest loses no acknowledged event.
 */

const BIN = join(import.meta.dirname, '../../bin/analytics-engine.mjs');
const KEY = 'stateless-key-0123456789';
const url = inject('clickhouseUrl');
const password = inject('clickhousePassword');
let dir: string;
const children: ChildProcess[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'engine-ch-cli-'));
});
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function start(args: string[], env: Record<string, string>): ChildProcess {
  const childEnv: Record<string, string | undefined> = { ...process.env, ...env };
  delete childEnv.INIT_CWD;
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: dir,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return child;
}

async function serve(
  flags: string[] = [],
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = start(['serve', '--port', '0', '--clickhouse', url, ...flags], {
    ANALYTICS_API_KEY: KEY,
    CLICKHOUSE_USER: 'default',
    CLICKHOUSE_PASSWORD: password,
  });
  let out = '';
  child.stderr?.on('data', (d) => {
    out += d;
  });
  const served = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  return { child, url: served, output: () => out };
}

async function post(base: string, path: string, body: unknown) {
  const response = await fetch(`${base}${path}`, { method: 'POST', body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('serve --clickhouse', () => {
  test('two engines on one ClickHouse answer identical data; the log line has no password', async () => {
    const [a, b] = await Promise.all([serve(), serve()]);
    expect(a.output()).toContain(`ClickHouse ${url}`);
    expect(a.output()).not.toContain(password);
    const jsons = Array.from({ length: 120 }, (_, i) => ({ i, kind: i % 2 ? 'odd' : 'even' }));
    expect(
      await post(a.url, '/api/bulk-log', { api_key: KEY, collection: 'shared', jsons }),
    ).toEqual({ status: 200, body: { ok: true, count: 120 } });
    expect(
      await post(b.url, '/api/log', { api_key: KEY, collection: 'other', json: { x: 1 } }),
    ).toMatchObject({ status: 200 });
    for (const query of [
      { collection: 'shared', graph_type: 'Samples', start: '1 day ago', end: 'now' },
      {
        collection: 'shared',
        graph_type: 'Single Value',
        start: '1 day ago',
        end: 'now',
      },
      { sql_query: 'SELECT count() AS n FROM other', graph_type: 'Table' },
    ]) {
      const fromA = await post(a.url, '/api/visualize/data', { api_key: KEY, ...query });
      const fromB = await post(b.url, '/api/visualize/data', { api_key: KEY, ...query });
      expect(fromA.body).not.toHaveProperty('error');
      expect(fromA.status).toBe(200);
      expect(fromB).toEqual(fromA);
    }
    const single = await post(b.url, '/api/visualize/data', {
      api_key: KEY,
      collection: 'shared',
      graph_type: 'Single Value',
      start: '1 day ago',
      end: 'now',
    });
    expect(single.body.result).toEqual([{ Count: 120 }]);
    const listA = await post(a.url, '/api/collections', { api_key: KEY });
    const listB = await post(b.url, '/api/collections', { api_key: KEY });
    expect(listA.body).toEqual({ list: [{ name: 'other' }, { name: 'shared' }] });
    expect(listB).toEqual(listA);
    a.child.kill('SIGTERM');
    b.child.kill('SIGTERM');
  }, 60_000);

  test('an engine killed mid-ingest loses no acknowledged event, and its rollups agree with the events', async () => {
    // Rollups by w: the view writes them in the inserts the kill interrupts. Read wherever they
    // answer: these events hold about a rollup row each, which the planner would leave unread.
    const rollups = ['--rollup-keys', 'w', '--rollup-reads', 'always'];
    const [victim, survivor] = await Promise.all([serve(rollups), serve(rollups)]);
    const now = Math.floor(Date.now() / 1000);
    let acknowledged = 0;
    let stop = false;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        try {
          const r = await post(victim.url, '/api/log', {
            api_key: KEY,
            collection: 'killed',
            // Spread over 30 days, so that most land in whole spans a 40-day window reads from rollups.
            timestamp: now - ((i * 7919 + w * 104_729) % (30 * 86_400)),
            json: { w, i },
          });
          if (r.status === 200) acknowledged++;
        } catch {
          return; // the engine is gone
        }
      }
    });
    // Killed once writes are flowing, however busy the machine: after 20 acknowledgements.
    const until = Date.now() + 30_000;
    while (acknowledged < 20 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    victim.child.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 200));
    stop = true;
    await Promise.all(writers);
    expect(acknowledged).toBeGreaterThan(10);
    const answer = await post(survivor.url, '/api/visualize/data', {
      api_key: KEY,
      sql_query: 'SELECT count() AS n FROM killed',
      graph_type: 'Table',
    });
    const { n } = (answer.body.result as Array<{ n: number }>)[0] ?? { n: -1 };
    // Every acknowledged event is there; one more may have landed after its answer was lost.
    expect(n).toBeGreaterThanOrEqual(acknowledged);
    expect(n).toBeLessThanOrEqual(acknowledged + 4);
    // Daily counts split by w over 40 days read the whole spans from rollups: they add up to the
    // events stored, each w's line to its writer's events.
    const perW = await post(survivor.url, '/api/visualize/data', {
      api_key: KEY,
      sql_query:
        "SELECT JSONExtractInt(json, 'w') AS w, count() AS n FROM killed GROUP BY w ORDER BY w",
      graph_type: 'Table',
    });
    const split = await post(survivor.url, '/api/visualize/data', {
      api_key: KEY,
      collection: 'killed',
      graph_type: 'Multi Line',
      split: 'w',
      granularity: 'Day',
      start: '40 days ago',
      end: 'now',
      IANA_time_zone: 'UTC',
    });
    expect(split.status).toBe(200);
    // Rows of {timestamp, <w>: count, …}: each w's counts added up over the days.
    const fromLines: Record<string, number> = {};
    for (const { timestamp: _, ...counts } of split.body.result as Array<Record<string, number>>) {
      for (const [w, count] of Object.entries(counts)) fromLines[w] = (fromLines[w] ?? 0) + count;
    }
    const fromEvents = Object.fromEntries(
      (perW.body.result as Array<{ w: number; n: number }>).map((r) => [String(r.w), Number(r.n)]),
    );
    expect(fromLines).toEqual(fromEvents);
    survivor.child.kill('SIGTERM');
  }, 60_000);

  test('refuses credentials in the URL', async () => {
    const child = start(
      ['serve', '--port', '0', '--clickhouse', 'http://default:secret@127.0.0.1:1'],
      {
        ANALYTICS_API_KEY: KEY,
      },
    );
    let err = '';
    child.stderr?.on('data', (d) => {
      err += d;
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(2);
    expect(err).toMatch(/CLICKHOUSE_USER and CLICKHOUSE_PASSWORD, not in the URL/);
    expect(err).not.toContain('secret');
  });
});
