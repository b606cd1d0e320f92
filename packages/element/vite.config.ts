import { defineConfig } from 'vite';
import { minifyLitTemplates } from './build/minify-lit-templates.ts';

/**
 * `vite build`: the CDN bundle `dist/analytics-chart.js`, one self-contained ES module (Lit, the
 * Chart.js parts we register, the element) that defines `<analytics-chart>` when loaded.
 * `vite build --mode esm`: the npm package's JavaScript in `dist/esm`, one file per source module,
 * with `lit`, `chart.js` and `@analytics-chart/protocol` left as imports for the host's bundler
 * to share.
 */
export default defineConfig(({ mode }) => {
  const esm = mode === 'esm';
  return {
    plugins: esm ? [] : [minifyLitTemplates()],
    build: {
      target: 'es2022',
      outDir: esm ? 'dist/esm' : 'dist',
      emptyOutDir: false,
      reportCompressedSize: false,
      copyPublicDir: false,
      minify: !esm,
      lib: {
        entry: 'src/index.ts',
        formats: ['es'],
        fileName: () => (esm ? 'index.js' : 'analytics-chart.js'),
      },
      rolldownOptions: {
        external: esm
          ? [/^lit(\/|$)/, /^chart\.js(\/|$)/, /^@analytics-chart\/protocol(\/|$)/]
          : [],
        // Chart.js reads many properties off objects at module scope; none of those reads has a
        // side effect, and saying so lets unused controllers and helpers go.
        treeshake: { propertyReadSideEffects: false },
        output: esm
          ? { preserveModules: true, preserveModulesRoot: 'src', entryFileNames: '[name].js' }
          : // Library mode keeps whitespace by default; the CDN file is for browsers, not readers.
            { minify: true, comments: { legal: false, annotation: false, jsdoc: false } },
      },
    },
  };
});
