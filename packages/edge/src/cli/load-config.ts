import { existsSync, readFileSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { EdgeModuleConfig } from '../config/edge-module-config.ts';
import { parseJsonServeConfig, type ServeConfig } from './serve-config.ts';

/** File names looked for in the working directory, in this order. */
export const CONFIG_NAMES = [
  'analytics-edge.config.ts',
  'analytics-edge.config.mts',
  'analytics-edge.config.js',
  'analytics-edge.config.mjs',
  'analytics-edge.config.json',
];

const TYPESCRIPT = new Set(['.ts', '.mts', '.cts']);

async function importModule(path: string): Promise<unknown> {
  try {
    return ((await import(pathToFileURL(path).href)) as { default?: unknown }).default;
  } catch (error) {
    const code = (error as { code?: string }).code ?? '';
    if (TYPESCRIPT.has(extname(path)) && /FILE_EXTENSION|TYPE_STRIPPING/.test(code)) {
      throw new Error(
        `this runtime (Node ${process.versions.node}) cannot load the TypeScript config ${path}: use a .json or .js config, or run under Node 23.6+, Bun, Deno or node --import tsx`,
      );
    }
    throw error;
  }
}

/**
 * Loads a config: `--config FILE`, else the first of {@link CONFIG_NAMES} in `cwd`. A module's
 * default export is the config, or a function of the environment returning it; a `.json` file
 * holds the plain-data part (see `ServeConfig`). TypeScript loads only where the runtime can
 * (Node 23.6+, Bun, Deno, or under tsx).
 */
export async function loadEdgeModuleConfig(
  cwd: string,
  file: string | undefined,
  env: Record<string, string | undefined>,
): Promise<{ path: string; config: ServeConfig }> {
  const path = file
    ? resolve(cwd, file)
    : CONFIG_NAMES.map((name) => resolve(cwd, name)).find((candidate) => existsSync(candidate));
  if (!path) {
    throw new Error(
      `no config in ${cwd} (looked for ${CONFIG_NAMES.join(', ')}); pass --config FILE, a .json file on any Node`,
    );
  }
  if (!existsSync(path)) throw new Error(`config file ${path} does not exist`);
  if (extname(path) === '.json') {
    let value: unknown;
    try {
      value = JSON.parse(readFileSync(path, 'utf8'));
    } catch (error) {
      throw new Error(`${path} is not JSON: ${(error as Error).message}`);
    }
    try {
      return { path, config: parseJsonServeConfig(value) };
    } catch (error) {
      throw new Error(`${path}: ${(error as Error).message}`);
    }
  }
  let config = await importModule(path);
  if (typeof config === 'function') config = (config as (e: typeof env) => unknown)(env);
  if (typeof config !== 'object' || config === null || !('queries' in config)) {
    throw new Error(`${path} must default-export a config with queries (see defineEdgeConfig)`);
  }
  return { path, config: config as EdgeModuleConfig };
}
