import { clusterSchema } from '../storage/clickhouse/clickhouse-cluster-schema.ts';
import { workspaceDatabase } from '../storage/clickhouse/clickhouse-schema.ts';
import { stringOption, workspaceOption } from './usage-error.ts';

/**
 * `cluster-ddl`: prints the statements an operator runs once on a ClickHouse cluster before the
 * engines start, for one workspace, ready for `clickhouse client --multiquery`.
 */
export async function clusterDdlCommand(
  options: Record<string, string | boolean | undefined>,
): Promise<number> {
  const workspace = workspaceOption(options.workspace);
  const cluster = stringOption(options.cluster, '{cluster}');
  const statements = clusterSchema(workspaceDatabase('analytics_', workspace), cluster);
  process.stdout.write(`${statements.join(';\n\n')};\n`);
  return 0;
}
