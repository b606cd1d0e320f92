/**
 * `@analytics-chart/edge`: the Hono app a host deploys to sign query ids, check sessions, run
 * queries with the workspace key it alone holds, and answer the widget with chart data only.
 * Runtime-agnostic (WebCrypto, fetch, Hono); Node and Workers entries live under `adapter/`.
 */
export {
  type Backend,
  BackendError,
  type BackendFailure,
  readEnvelope,
} from './backend/backend.ts';
export {
  type EngineBackendOptions,
  engineBackend,
  type QueryableEngine,
} from './backend/engine-backend.ts';
export { type HttpBackendOptions, httpBackend } from './backend/http-backend.ts';
export { type EdgeEnv, edgeConfigFromEnv } from './config/config-from-env.ts';
export type {
  BundleSource,
  CacheSettings,
  EdgeConfig,
  IdSettings,
  RateLimitSettings,
} from './config/edge-config.ts';
export { defineEdgeConfig, type EdgeModuleConfig } from './config/edge-module-config.ts';
export { createEdge, type Edge } from './create-edge.ts';
export type { EmbedOptions } from './embed/embed-options.ts';
export { RESIZE_MESSAGE_TYPE } from './embed/embed-scripts.ts';
export {
  embedUrl,
  type SnippetInput,
  type Snippets,
  snippetsFor,
} from './embed/embed-snippets.ts';
export { EdgeError } from './http/edge-error.ts';
export { mountEdge } from './http/mount-edge.ts';
export { consoleLogSink, type LogEntry, type LogLevel, type LogSink } from './log/logger.ts';
export { type TrimContext, toChartPayload } from './payload/to-chart-payload.ts';
export {
  type MemoryRateLimitOptions,
  memoryRateLimitStore,
  type RateDecision,
  type RateLimitStore,
  type RateRule,
} from './protection/rate-limit.ts';
export { compileDefinition, DefinitionError } from './registry/compile-definition.ts';
export type {
  ParamSpec,
  QueryDefinition,
  RangeOption,
  SessionParam,
  SignerParam,
  SignerRule,
} from './registry/query-definition.ts';
export { type ForwardSessionOptions, forwardSession } from './session/forward-session.ts';
export { type JwtSessionOptions, jwtSession } from './session/jwt-session.ts';
export type { Authorize, Session } from './session/session.ts';
export {
  type EdgeStore,
  type IssuedId,
  type IssuedIdPage,
  type SharedResult,
  type SharedResults,
  StoreUnavailableError,
} from './store/edge-store.ts';
export { type MemoryStoreOptions, memoryStore } from './store/memory-store.ts';
export type { StudioRule } from './studio/studio-rule.ts';
export { parseTtl } from './tokens/parse-ttl.ts';
export type { QueryIdClaims } from './tokens/query-id-claims.ts';
export { SignError, type SignedQueryId, type SignQueryIdOptions } from './tokens/query-signer.ts';
export {
  formatSigningKeys,
  generateSigningKey,
  parseSigningKeys,
  type SigningKey,
} from './tokens/signing-keys.ts';
