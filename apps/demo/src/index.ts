/**
 * The demo's pieces, for the end-to-end tests: the element bundle's path, the demo data step,
 * the example pages' site and the whole demo in one call. Run it with `pnpm start`.
 */
export { elementBundlePath } from './element-bundle.ts';
export { DEMO_WORKSPACE, ensureDemoData } from './ensure-demo-data.ts';
export { createExamplesSite, EXAMPLE_PAGES } from './examples-site/create-examples-site.ts';
export { fillExampleTemplate, signRequests } from './examples-site/fill-example-template.ts';
export { type RunningDemo, type StartDemoOptions, startDemo } from './start-demo.ts';
