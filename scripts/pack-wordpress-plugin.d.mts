/** Where `pnpm pack:wordpress` writes the plugin's zip (git-ignored). */
export const PLUGIN_ZIP: string;
/** Writes the plugin's zip and returns its path. */
export function packWordPressPlugin(): string;
