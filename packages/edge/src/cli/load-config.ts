import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { EdgeModuleConfig } from '../config/edge-module-config.ts';

/** File names looked for in the working directory, in this order. */
export const CONFIG_NAMES = [
  'analytics-edge.config.ts',
  'analytics-edge.config.mts',
  'analytics-edge.config.js',
  'analytics-edge.config.mjs',
];

/**
 * Loads a config module: `--config FILE`, else the first of {@link CONFIG_NAMES} in `cwd`. The
 * default export is the config, or a function of the environment returning it.
 */
export async function loadEdgeModuleConfig(
  cwd: string,
  file: string | undefined,
  env: Record<string, string | undefined>,
): Promise<{ path: string; config: EdgeModuleConfig }> {
  const path = file
    ? resolve(cwd, file)
    : CONFIG_NAMES.map((name) => resolve(cwd, name)).find((candidate) => existsSync(candidate));
  if (!path) {
    throw new Error(`no ${CONFIG_NAMES[0]} in ${cwd}; pass --config FILE`);
  }
  if (!existsSync(path)) throw new Error(`config file ${path} does not exist`);
  const module = (await import(pathToFileURL(path).href)) as { default?: unknown };
  let config = module.default;
  if (typeof config === 'function') config = (config as (e: typeof env) => unknown)(env);
  if (typeof config !== 'object' || config === null || !('queries' in config)) {
    throw new Error(`${path} must default-export a config with queries (see defineEdgeConfig)`);
  }
  return { path, config: config as EdgeModuleConfig };
}
