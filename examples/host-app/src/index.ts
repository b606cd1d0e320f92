/**
 * The host-app example as a library, for the other examples and the end-to-end tests: the app,
 * its edge config, the query registry, and the demo's start-up pieces. Run it with `pnpm start`.
 */
export { createHostApp, type HostAppOptions } from './create-host-app.ts';
export * from './dashboard-queries.ts';
export { DEMO_WORKSPACE, ensureDemoData } from './demo/ensure-demo-data.ts';
export { ELEMENT_BUNDLE, ensureElementBundle } from './demo/ensure-element-bundle.ts';
export { type RunningDemo, type StartDemoOptions, startDemo } from './demo/start-demo.ts';
export { EDGE_QUERIES } from './edge-queries.ts';
export {
  createExamplesSite,
  EXAMPLE_PAGES,
} from './examples-site/create-examples-site.ts';
export { fillExampleTemplate, signRequests } from './examples-site/fill-example-template.ts';
export { type HostEdgeOptions, hostEdgeConfig } from './host-edge-config.ts';
export { PUBLIC_QUERIES } from './public-queries.ts';
export {
  SESSION_COOKIE,
  type SessionSettings,
  sessionReader,
  startSession,
} from './session-cookie.ts';
export { createUserStore, demoUsers, type HostUser } from './users.ts';
