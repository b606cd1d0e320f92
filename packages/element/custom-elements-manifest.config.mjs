import { integrationsPlugin, publishedManifestPlugin } from './build/manifest-plugins.mjs';

/**
 * `cem analyze`: builds custom-elements.json from the element's JSDoc (generated, not committed),
 * rewritten to describe the published package, then the JSX typings and VS Code custom data.
 */
export default {
  globs: ['src/**/*.ts'],
  outdir: '.',
  litelement: true,
  plugins: [publishedManifestPlugin(), integrationsPlugin()],
};
