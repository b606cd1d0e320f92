// Starts a loader parse worker when the engine runs from its TypeScript sources (the published
// package starts the compiled ndjson-worker.js instead). Worker threads do not inherit the
// TypeScript loader of the process that starts them (tsx, vitest), so each one registers tsx
// itself, then loads the body.
// tsx's CommonJS hook runs on the worker's own thread; its ESM hook would start a loader thread
// per worker, which delays each worker's first chunk and costs CPU at the start of `engine load`.
require('tsx/cjs/api').register();
require('./ndjson-worker.ts');
