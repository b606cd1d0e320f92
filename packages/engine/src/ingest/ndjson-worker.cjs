// Starts a loader parse worker when the engine runs from its TypeScript sources (the published
// package starts the compiled ndjson-worker.js instead). Worker threads do not inherit the
// TypeScript loader of the process that starts them (tsx, vitest), so each one registers tsx's
// CommonJS hook, which runs on the worker's own thread where the ESM hook would start one more
// loader thread per worker.
require('tsx/cjs/api').register();
require('./ndjson-worker.ts');
