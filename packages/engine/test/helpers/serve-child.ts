/**
 * A child process for durability tests: serves an engine on the data directory given as the
 * first argument (keeping rollups when the second is `--rollups`, by the keys and sums of the
 * JSON spec the third holds, if any) and prints its URL. The test
 * kills it with SIGKILL, no shutdown at all.
 */
import { createEngine, serveEngine } from '../../src/index.ts';
import { API_KEY } from './engine-server.ts';

const engine = await createEngine({
  dataDir: process.argv[2] as string,
  workspaces: { default: API_KEY },
  // Rollups read wherever they answer, whatever their rows per event.
  rollupReads: 'always',
  rollups:
    process.argv[3] === '--rollups' &&
    (process.argv[4] ? { default: JSON.parse(process.argv[4]) as { keys: string[] } } : true),
});
const served = await serveEngine({ engine, port: 0, host: '127.0.0.1' });
process.stdout.write(`${served.url}\n`);
