// Starts an ingest body worker when the engine runs from its TypeScript sources (the published
// package starts the compiled body-worker.js instead), registering tsx's CommonJS hook on the
// worker's own thread as `ndjson-worker.cjs` does.
require('tsx/cjs/api').register();
require('./body-worker.ts');
