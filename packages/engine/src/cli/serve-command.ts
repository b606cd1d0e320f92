import { readFile } from 'node:fs/promises';
import type { ClickHouseOptions } from '../drivers/clickhouse/clickhouse-driver.ts';
import { createEngine } from '../engine.ts';
import { serveEngine } from '../http/serve-engine.ts';
import { sortFieldAllowed } from '../storage/clickhouse/clickhouse-key-columns.ts';
import { resolveUserPath } from './resolve-path.ts';
import { rollupReadsOption, rollupsOption } from './rollup-options.ts';
import { integerOption, stringOption, UsageError } from './usage-error.ts';

type Options = Record<string, string | boolean | undefined>;

async function workspacesFrom(options: Options): Promise<Record<string, string>> {
  if (typeof options.workspaces === 'string') {
    const file = resolveUserPath(options.workspaces);
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(file, 'utf8'));
    } catch (error) {
      throw new UsageError(`--workspaces ${file}: ${(error as Error).message}`);
    }
    const entries =
      typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
        ? Object.entries(parsed)
        : [];
    if (
      entries.length === 0 ||
      entries.some(([, key]) => typeof key !== 'string' || key.length === 0)
    ) {
      throw new UsageError(
        `--workspaces ${file}: expected {"<workspace>": "<key>", ...} with non-empty keys`,
      );
    }
    return Object.fromEntries(entries) as Record<string, string>;
  }
  const key = process.env.ANALYTICS_API_KEY;
  if (!key) {
    throw new UsageError(
      'set ANALYTICS_API_KEY (the key of workspace "default") or pass --workspaces FILE',
    );
  }
  return { default: key };
}

/**
 * `--clickhouse URL`: ClickHouse's HTTP interface, credentials from the environment only, so
 * that neither the command line nor the log line below ever holds them; `--clickhouse-wait
 * SECONDS`: how long start-up waits for it to be reachable.
 */
export function clickhouseFrom(
  options: Options,
  flag = 'clickhouse',
): ClickHouseOptions | undefined {
  if (options[flag] === undefined) {
    if (options['clickhouse-wait'] !== undefined) {
      throw new UsageError(`--clickhouse-wait needs --${flag} URL`);
    }
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(String(options[flag]));
  } catch {
    throw new UsageError(`--${flag}: expected a URL such as http://127.0.0.1:8123`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--${flag}: expected an http:// or https:// URL`);
  }
  if (url.username || url.password) {
    throw new UsageError(
      `--${flag}: put the user and password in CLICKHOUSE_USER and CLICKHOUSE_PASSWORD, not in the URL`,
    );
  }
  const wait = options['clickhouse-wait'];
  return {
    url: url.toString(),
    username: process.env.CLICKHOUSE_USER || 'default',
    password: process.env.CLICKHOUSE_PASSWORD ?? '',
    ...(wait === undefined
      ? {}
      : { startupWaitMs: integerOption('clickhouse-wait', wait, 0) * 1_000 }),
  };
}

/**
 * `--clickhouse-sort-field KEY` and `--clickhouse-key-columns KEY,...`, set on the ClickHouse
 * options (serve, load and export take both).
 */
export function withClickHouseKeys(
  options: Options,
  clickhouse: ClickHouseOptions | undefined,
): ClickHouseOptions | undefined {
  const sortField = options['clickhouse-sort-field'];
  const keyColumns = options['clickhouse-key-columns'];
  for (const [flag, value] of [
    ['clickhouse-sort-field', sortField],
    ['clickhouse-key-columns', keyColumns],
  ] as const) {
    if (value !== undefined && !clickhouse)
      throw new UsageError(`--${flag} needs --clickhouse URL`);
  }
  if (!clickhouse) return clickhouse;
  if (sortField !== undefined) {
    if (!sortFieldAllowed(String(sortField))) {
      throw new UsageError('--clickhouse-sort-field: expected a payload key such as event');
    }
    clickhouse.sortField = String(sortField);
  }
  if (keyColumns !== undefined) {
    const keys = String(keyColumns).split(',');
    if (!keys.every(sortFieldAllowed)) {
      throw new UsageError(
        '--clickhouse-key-columns: expected payload keys such as event,plan,price',
      );
    }
    clickhouse.keyColumns = [...new Set(keys)];
  }
  return clickhouse;
}

/** `serve`: opens the workspaces and serves the HTTP API until SIGINT or SIGTERM. */
export async function serveCommand(options: Options): Promise<number> {
  const port = integerOption('port', options.port, 8787);
  const host = stringOption(options.host, '127.0.0.1');
  const dataDir = resolveUserPath(stringOption(options.data, '.data'));
  const workspaces = await workspacesFrom(options);
  const clickhouse = withClickHouseKeys(options, clickhouseFrom(options));
  const rollups = rollupsOption(options);
  const rollupReads = rollupReadsOption(options);
  const engine = await createEngine({
    dataDir,
    workspaces,
    clickhouse,
    ...(rollups === true ? { rollups: true } : {}),
    // The same keys and sums for every workspace the server opens.
    ...(typeof rollups === 'object'
      ? { rollups: Object.fromEntries(Object.keys(workspaces).map((w) => [w, rollups])) }
      : {}),
    ...(rollupReads ? { rollupReads } : {}),
  });
  let served: Awaited<ReturnType<typeof serveEngine>>;
  try {
    served = await serveEngine({ engine, port, host });
  } catch (error) {
    await engine.close();
    throw error;
  }
  process.stdout.write(
    `analytics-engine listening on ${served.url} (${clickhouse ? `ClickHouse ${new URL(clickhouse.url).origin}` : `data ${dataDir}`}; workspaces ${Object.keys(workspaces).join(', ')})\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await served.close();
  await engine.close();
  return 0;
}
