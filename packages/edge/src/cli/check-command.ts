import { backendFromEnv } from '../config/config-from-env.ts';
import { checkDefinitions, type DefinitionFinding } from '../registry/check-definitions.ts';
import { compileRegistry } from '../registry/compile-definition.ts';
import { loadEdgeModuleConfig } from './load-config.ts';

/** Options of `analytics-edge check`, as parsed from the command line. */
export interface CheckOptions {
  config?: string | undefined;
}

/** A finding as one line: `✗` for errors, `!` for warnings, with the query it is about. */
export function findingLine(finding: DefinitionFinding): string {
  const mark = finding.level === 'error' ? '✗' : '!';
  return `${mark} ${finding.query ? `query "${finding.query}": ` : ''}${finding.message}`;
}

/**
 * `analytics-edge check`: runs the config's every definition against the workspace the edge
 * would query (the config's backend, else `ANALYTICS_BASE_URL` with `ANALYTICS_API_KEY`) and
 * prints what would draw wrong: a collection the workspace lacks, a definition the service
 * refuses, a field no event has. Resolves to the exit code: 1 when any error was found.
 */
export async function checkCommand(
  options: CheckOptions,
  cwd: string,
  env: Record<string, string | undefined>,
  write: (text: string) => void,
): Promise<number> {
  const { path, config } = await loadEdgeModuleConfig(cwd, options.config, env);
  const registry = compileRegistry(config.queries);
  const backend = config.backend ?? backendFromEnv(env);
  const where = config.backend ? "the config's backend" : env.ANALYTICS_BASE_URL?.trim();
  write(`Checking ${registry.size} queries from ${path} against ${where}\n`);
  const findings = await checkDefinitions(registry, backend);
  for (const [name] of registry) {
    const mine = findings.filter((f) => f.query === name);
    if (mine.length === 0) write(`✓ query "${name}"\n`);
  }
  for (const finding of findings) write(`${findingLine(finding)}\n`);
  const errors = findings.filter((f) => f.level === 'error').length;
  const warnings = findings.length - errors;
  write(
    findings.length === 0
      ? 'Every query runs, and reads a collection and fields the workspace has.\n'
      : `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}\n`,
  );
  return errors > 0 ? 1 : 0;
}
