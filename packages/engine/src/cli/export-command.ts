import type { ClickHouseOptions } from '../drivers/clickhouse/clickhouse-driver.ts';
import { exportToClickHouse } from '../drivers/export-to-clickhouse.ts';
import { openWorkspaceFile } from './open-workspace-file.ts';
import { resolveUserPath } from './resolve-path.ts';
import { clickhouseFrom, withClickHouseKeys } from './serve-command.ts';
import { stringOption, UsageError, workspaceOption } from './usage-error.ts';

/**
 * `export --to-clickhouse URL`: copies a DuckDB workspace into ClickHouse, where
 * `serve --clickhouse URL` answers from it. Prints one line per collection and the total.
 */
export async function exportCommand(
  options: Record<string, string | boolean | undefined>,
): Promise<number> {
  const target = clickhouseFrom(options, 'to-clickhouse');
  if (!target) throw new UsageError('export needs --to-clickhouse URL');
  const clickhouse = withClickHouseKeys(options, target) as ClickHouseOptions;
  const dataDir = resolveUserPath(stringOption(options.data, '.data'));
  const workspace = workspaceOption(options.workspace);
  const db = await openWorkspaceFile(dataDir, workspace);
  try {
    const result = await exportToClickHouse(db, workspace, clickhouse);
    let total = 0;
    for (const c of result.collections) {
      process.stdout.write(`${c.name}: ${c.events} events\n`);
      total += c.events;
    }
    process.stdout.write(
      `exported ${total} events of workspace ${workspace} to ClickHouse ${new URL(clickhouse.url).origin}\n`,
    );
    return 0;
  } finally {
    await db.close();
  }
}
