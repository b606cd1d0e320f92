/** `cem analyze`: builds custom-elements.json from the element's JSDoc (generated, not committed). */
export default {
  globs: ['src/**/*.ts'],
  outdir: '.',
  litelement: true,
};
