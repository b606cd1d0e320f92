/** The element's one-file bundle, imported as text (wrangler's `Text` rule; esbuild's text loader). */
declare module '@analytics-chart/element/analytics-chart.js' {
  const source: string;
  export default source;
}
