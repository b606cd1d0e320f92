import type { EdgeConfig } from './edge-config.ts';

/**
 * What an `analytics-edge.config.ts` default-exports: the code-side config (the registry and
 * settings; never secrets, which come from the environment), `publicUrl` included (the snippets
 * the CLI prints use it too). May also be a function of the environment.
 */
export type EdgeModuleConfig = Partial<EdgeConfig> & Pick<EdgeConfig, 'queries'>;

/** Types a config module's default export (an identity function, for editor help). */
export function defineEdgeConfig<
  T extends EdgeModuleConfig | ((env: Record<string, string | undefined>) => EdgeModuleConfig),
>(config: T): T {
  return config;
}
