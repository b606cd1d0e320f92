import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { WorkspaceDb, type WorkspaceDbOptions } from '../storage/duckdb/workspace-db.ts';
import { UsageError } from './usage-error.ts';

/**
 * Opens `<dataDir>/<workspace>.duckdb` for a command that writes it directly. DuckDB locks the
 * file, so this fails while an engine serves the same data directory, with a sentence saying so.
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
  // A file another process holds fails with WorkspaceInUseError's sentence.
  return WorkspaceDb.open(join(dataDir, `${workspace}.duckdb`), options);
}
