#!/usr/bin/env node
/**
 * `analytics-engine <command>`: `serve`, `load`, `demo-data`, `export` and `cluster-ddl`. Run from the repository root as
 * `pnpm engine <command>`; paths are relative to the directory the command was run from.
 */
import { parseArgs } from 'node:util';
import { UsageError } from './usage-error.ts';

type Run = (
  options: Record<string, string | boolean | undefined>,
  positionals: string[],
) => Promise<number>;

// Each command's modules load only when it runs: `load` starts its parse workers sooner and
// `--help` answers at once, without loading the HTTP server or the demo generator.
const serveCommand: Run = async (options) =>
  (await import('./serve-command.ts')).serveCommand(options);
const loadCommand: Run = async (...args) =>
  (await import('./load-command.ts')).loadCommand(...args);
const demoDataCommand: Run = async (options) =>
  (await import('./demo-data-command.ts')).demoDataCommand(options);
const exportCommand: Run = async (options) =>
  (await import('./export-command.ts')).exportCommand(options);
const clusterDdlCommand: Run = async (options) =>
  (await import('./cluster-ddl-command.ts')).clusterDdlCommand(options);

const SERVE_USAGE = `  serve      [--port 8787] [--host 127.0.0.1] [--data .data] [--workspaces FILE]
             serve the Data Query API; the key comes from ANALYTICS_API_KEY (workspace
             "default"), or --workspaces FILE holding {"<workspace>": "<key>", ...};
             --clickhouse URL keeps the workspaces in ClickHouse instead of --data (user and
             password from CLICKHOUSE_USER and CLICKHOUSE_PASSWORD); --clickhouse-sort-field KEY
             sorts a projection of the events by that top-level payload key (e.g. event);
             --clickhouse-key-columns KEY,... gives typed columns to those top-level keys
             only (and the sort field's and rollups'), reading the rest from the payload;
             --clickhouse-wait SECONDS waits that long for a ClickHouse that cannot be
             reached yet (default 30; 0 fails at once);
             --rollups keeps event counts per 15-minute span in each DuckDB file (on
             ClickHouse, in a table a materialized view fills), which Count
             queries over four weeks or more of whole spans read instead of the events (built
             at start when missing;
             a serve without it drops them, a load keeps up what the file has);
             --rollup-keys KEY,... keeps them per value of those top-level keys (splits and
             =, !=, <, > filters on them read rollups), --rollup-sums KEY,... with those
             metrics' Sum and Avg (either implies --rollups); "auto" among the keys lets
             the engine add the keys and metrics queries use (logged when added; on
             ClickHouse the rollup table's comment lists the keys kept; README, rollups);
             --rollup-reads always reads rollups wherever they answer, rather than only
             where their rows cost less to read than the events (cheaper, the default)
`;
const LOAD_USAGE = `  load       [--data .data | --clickhouse URL] [--workspace default] [--collection all_events]
             [--cluster-by KEY | --no-cluster | --clickhouse-sort-field KEY]
             [--clickhouse-key-columns KEY,...] [--rollups]
             [--rollup-keys KEY,...] [--rollup-sums KEY,...] FILE
             load NDJSON lines {"timestamp": <unix s>, "json": {...}} into a collection, then
             order its rows by a top-level key and time, so that filters on the key skip the
             rows of its other values: KEY, or by default the key that tells its events apart
             (an event name or type), if one does; --clickhouse URL loads into the workspace in
             ClickHouse instead (user and password from CLICKHOUSE_USER and CLICKHOUSE_PASSWORD),
             with --clickhouse-sort-field KEY filling serve's sort projection as it loads,
             and --clickhouse-key-columns KEY,... and --clickhouse-wait SECONDS as serve
             takes them
`;
const DEMO_DATA_USAGE = `  demo-data  [--data .data] [--events 1000000] [--workspace default] [--seed 42] [--force]
             write a seeded demo workspace (the last 90 days)
`;

const EXPORT_USAGE = `  export     --to-clickhouse URL [--data .data] [--workspace default]
             [--clickhouse-sort-field KEY] [--clickhouse-key-columns KEY,...]
             copy a workspace's collections into ClickHouse, where serve --clickhouse
             reads them (user and password from CLICKHOUSE_USER and CLICKHOUSE_PASSWORD;
             run it again after an interruption: batches already there are not written twice;
             --clickhouse-sort-field KEY fills serve's sort projection as it copies, and
             --clickhouse-key-columns as serve takes it)
`;

const CLUSTER_DDL_USAGE = `  cluster-ddl [--workspace default] [--cluster '{cluster}']
             print the DDL to run once on a ClickHouse cluster before serve --clickhouse
             (replicated tables, a Distributed event table), for clickhouse client --multiquery
`;

const USAGE = `usage: analytics-engine <command> [options]   (analytics-engine <command> --help)

commands:
${SERVE_USAGE}${LOAD_USAGE}${DEMO_DATA_USAGE}${EXPORT_USAGE}${CLUSTER_DDL_USAGE}`;

const COMMANDS = {
  serve: {
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      data: { type: 'string' },
      workspaces: { type: 'string' },
      clickhouse: { type: 'string' },
      'clickhouse-sort-field': { type: 'string' },
      'clickhouse-key-columns': { type: 'string' },
      'clickhouse-wait': { type: 'string' },
      rollups: { type: 'boolean' },
      'rollup-keys': { type: 'string' },
      'rollup-sums': { type: 'string' },
      'rollup-reads': { type: 'string' },
    },
    usage: SERVE_USAGE,
    run: serveCommand,
  },
  load: {
    options: {
      data: { type: 'string' },
      workspace: { type: 'string' },
      collection: { type: 'string' },
      'cluster-by': { type: 'string' },
      'no-cluster': { type: 'boolean' },
      rollups: { type: 'boolean' },
      'rollup-keys': { type: 'string' },
      'rollup-sums': { type: 'string' },
      clickhouse: { type: 'string' },
      'clickhouse-sort-field': { type: 'string' },
      'clickhouse-key-columns': { type: 'string' },
      'clickhouse-wait': { type: 'string' },
    },
    usage: LOAD_USAGE,
    run: loadCommand,
  },
  'demo-data': {
    options: {
      data: { type: 'string' },
      events: { type: 'string' },
      workspace: { type: 'string' },
      seed: { type: 'string' },
      force: { type: 'boolean' },
    },
    usage: DEMO_DATA_USAGE,
    run: demoDataCommand,
  },
  export: {
    options: {
      data: { type: 'string' },
      workspace: { type: 'string' },
      'to-clickhouse': { type: 'string' },
      'clickhouse-sort-field': { type: 'string' },
      'clickhouse-key-columns': { type: 'string' },
    },
    usage: EXPORT_USAGE,
    run: exportCommand,
  },
  'cluster-ddl': {
    options: {
      workspace: { type: 'string' },
      cluster: { type: 'string' },
    },
    usage: CLUSTER_DDL_USAGE,
    run: clusterDdlCommand,
  },
} as const;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return name ? 0 : 2;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name as keyof typeof COMMANDS] : null;
  if (!command) {
    process.stderr.write(
      `analytics-engine: unknown command '${name}' (analytics-engine --help lists them)\n`,
    );
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`usage: analytics-engine ${name} [options]\n\n${command.usage}`);
    return 0;
  }
  try {
    const { values, positionals } = parseArgs({
      args: rest,
      options: command.options,
      allowPositionals: true,
      strict: true,
    });
    return await command.run(values as Record<string, string | boolean | undefined>, positionals);
  } catch (error) {
    if (
      error instanceof UsageError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      // One line: parseArgs's first sentence names the bad option; the rest is about positionals.
      const message = (error as Error).message.split('. To specify a positional')[0];
      process.stderr.write(
        `analytics-engine ${name}: ${message} (analytics-engine ${name} --help)\n`,
      );
      return 2;
    }
    process.stderr.write(
      `analytics-engine ${name}: ${(error as Error).message ?? String(error)}\n`,
    );
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
