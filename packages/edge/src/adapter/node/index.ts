/**
 * Node entry of the edge: serving on `@hono/node-server`, the element bundle from a file, and
 * signing keys from a development file. Everything of the core is re-exported.
 */

export * from '../../index.ts';
export { bundleFile, DEFAULT_BUNDLE_PATH, findElementBundle } from './bundle-file.ts';
export { type NodeEdgeConfig, nodeEdgeConfig } from './node-edge-config.ts';
export { type ServedEdge, type ServeEdgeOptions, serveEdge } from './serve-edge.ts';
export { ensureDevSigningKeys, readSigningKeysFile } from './signing-keys-file.ts';
