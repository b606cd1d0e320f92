import { clusterSchema } from '../storage/clickhouse/clickhouse-cluster-schema.ts';
import { workspaceDatabase } from '../storage/clickhouse/clickhouse-schema.ts';
import { stringOption, UsageError } from './usage-error.ts';

/**
 * `cluster-ddl`: prints the statements an operator runs once on a ClickHouse cluster before the
 * engines start, for one workspace, ready for `clickhouse client --multiquery`.
 */
export async function clusterDdlCommand(
  options: Record<string, string | boolean | undefined>,
): Promise<number> {
  const workspace = stringOption(options.workspace, 'default');
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(workspace)) {
    throw new UsageError(`--workspace '${workspace}' must be letters, digits, '_' or '-'`);
  }
  const cluster = stringOption(options.cluster, '{cluster}');
  const statements = clusterSchema(workspaceDatabase('analytics_', workspace), cluster);
  process.stdout.write(`${statements.join(';\n\n')};\n`);
  return 0;
}
