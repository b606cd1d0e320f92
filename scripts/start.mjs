#!/usr/bin/env node
// `pnpm start`: the one-command demo. Plain JavaScript so it runs on a bare Node before anything
// is compiled: it checks the Node version, loads TypeScript support (tsx, a dependency of the
// demo app) into THIS process, and hands over to apps/demo/src/main.ts, which prepares the demo
// and serves engine, edge, host app and example pages from this one process.
// Settings (all optional) are documented in the root README, "Configuration".
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  process.stderr.write(`pnpm start needs Node 20.19 or newer; this is ${process.version}.\n`);
  process.exit(1);
}

const demoApp = fileURLToPath(new URL('../apps/demo/', import.meta.url));
const require = createRequire(`${demoApp}package.json`);
let tsxApi;
try {
  // The package's `import` entry of `tsx/esm/api` (require.resolve would pick the CommonJS one).
  tsxApi = new URL('dist/esm/api/index.mjs', pathToFileURL(require.resolve('tsx/package.json')));
} catch {
  process.stderr.write('Dependencies are missing: run `pnpm install` first.\n');
  process.exit(1);
}
const main = `${demoApp}src/main.ts`;
if (!existsSync(main)) {
  process.stderr.write(`Cannot find ${main}.\n`);
  process.exit(1);
}

const { register } = await import(tsxApi.href);
register();
await import(pathToFileURL(main).href);
