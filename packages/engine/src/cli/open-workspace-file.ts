import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { WorkspaceDb, type WorkspaceDbOptions } from '../storage/duckdb/workspace-db.ts';
import { workspaceOption } from './usage-error.ts';

/**
 * Opens `<dataDir>/<workspace>.duckdb` for a command that writes it directly. DuckDB locks the
 * file, so this fails while an engine serves the same data directory, with a sentence saying so.
 */
export async function openWorkspaceFile(
  dataDir: string,
  workspace: string,
  options: WorkspaceDbOptions = {},
): Promise<WorkspaceDb> {
  // The name becomes a file name: checked here too, whoever the caller.
  const file = join(dataDir, `${workspaceOption(workspace)}.duckdb`);
  await mkdir(dataDir, { recursive: true });
  // A file another process holds fails with WorkspaceInUseError's sentence.
  return WorkspaceDb.open(file, options);
}
