/**
 * The host-app example as a library, for the demo and the end-to-end tests: the app, its edge
 * config, the query registry and the sign-in pieces. Run it alone with `npm start` (README).
 */
export { createHostApp, type HostAppOptions } from './create-host-app.ts';
export * from './dashboard-queries.ts';
export { EDGE_QUERIES } from './edge-queries.ts';
export { HOST_STUDIO, type HostEdgeOptions, hostEdgeConfig } from './host-edge-config.ts';
export { PUBLIC_QUERIES } from './public-queries.ts';
export {
  SESSION_COOKIE,
  type SessionSettings,
  sessionReader,
  startSession,
} from './session-cookie.ts';
export { createUserStore, demoUsers, type HostUser } from './users.ts';
