import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { WorkspaceDb, type WorkspaceDbOptions } from '../storage/duckdb/workspace-db.ts';
import { UsageError } from './usage-error.ts';

/**
 * Opens `<dataDir>/<workspace>.duckdb` for a command that writes it directly. DuckDB locks the
 * file, so this fails while an engine serves the same data directory; the message says so.
 */
export async function openWorkspaceFile(
  dataDir: string,
  workspace: string,
  options: WorkspaceDbOptions = {},
): Promise<WorkspaceDb> {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(workspace)) {
    throw new UsageError(`--workspace '${workspace}' must be letters, digits, '_' or '-'`);
  }
  await mkdir(dataDir, { recursive: true });
  const file = join(dataDir, `${workspace}.duckdb`);
  try {
    return await WorkspaceDb.open(file, options);
  } catch (error) {
    if (/lock/i.test((error as Error).message)) {
      throw new Error(
        `${file} is in use by another process (is an engine serving it? stop it first)`,
      );
    }
    throw error;
  }
}
