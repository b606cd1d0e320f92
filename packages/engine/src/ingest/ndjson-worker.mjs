// Starts a loader parse worker. Worker threads do not inherit the TypeScript loader of the
// process that starts them (tsx, vitest), so each one registers tsx itself, then loads the body.
import { register } from 'tsx/esm/api';

register();
await import('./ndjson-worker.ts');
