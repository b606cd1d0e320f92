/**
 * Starts `real-edge.ts` as a child process when the test server starts and stops it with the
 * server. The browser reads the edge's address from `GET /__real-edge/config` on the test server.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const script = new URL('./real-edge.ts', import.meta.url).pathname;

/** The plugin; `config` answers 503 with the reason when the edge could not start. */
export function realEdgePlugin() {
  let child;
  let info;
  let failure;
  return {
    name: 'real-edge',
    async serverStart({ config }) {
      const origin = `http://${config.hostname ?? 'localhost'}:${config.port}`;
      child = spawn(process.execPath, ['--import', 'tsx', script, origin], {
        cwd: new URL('../..', import.meta.url).pathname,
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      try {
        info = await new Promise((resolve, reject) => {
          const lines = createInterface({ input: child.stdout });
          const timer = setTimeout(
            () => reject(new Error('the edge did not start in 30 s')),
            30_000,
          );
          lines.once('line', (line) => {
            clearTimeout(timer);
            try {
              resolve(JSON.parse(line));
            } catch (error) {
              reject(error);
            }
          });
          child.once('exit', (code) => reject(new Error(`the edge exited with code ${code}`)));
        });
      } catch (error) {
        failure = String(error?.message ?? error);
      }
    },
    async serverStop() {
      if (child && child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    },
    serve(context) {
      if (context.path !== '/__real-edge/config') return undefined;
      return info
        ? { body: JSON.stringify(info), type: 'json' }
        : { body: JSON.stringify({ error: failure ?? 'not started' }), type: 'json' };
    },
  };
}
