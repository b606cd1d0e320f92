#!/usr/bin/env node
/**
 * Builds the published packages (protocol, engine, edge, element, in dependency order) whose
 * `dist/` is missing or older than what it is built from. Their `exports` point at `dist/`, in the
 * workspace as on npm, so every tool here runs what users run; this keeps `dist/` current. Run by
 * `pnpm install` (postinstall), `pnpm test`, `pnpm typecheck` and `pnpm start`; `--force`
 * rebuilds all.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const PACKAGES = ['protocol', 'engine', 'edge', 'element'];
const INPUTS = ['src', 'build', 'package.json', 'tsconfig.build.json', 'vite.config.ts'];
const STAMP = '.built';
const force = process.argv.includes('--force');

function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let time = 0;
  for (const entry of readdirSync(path)) time = Math.max(time, newest(join(path, entry)));
  return time;
}

let rebuiltBefore = false;
for (const name of PACKAGES) {
  const dir = join(root, 'packages', name);
  const stamp = join(dir, 'dist', STAMP);
  const inputs = INPUTS.map((input) => join(dir, input)).filter((path) => existsSync(path));
  // A package built before one it depends on was rebuilt is rebuilt too (its types may differ).
  const stale =
    force ||
    rebuiltBefore ||
    !existsSync(stamp) ||
    statSync(stamp).mtimeMs < Math.max(...inputs.map(newest));
  if (!stale) continue;
  process.stdout.write(`building @analytics-chart/${name}\n`);
  const run = spawnSync('pnpm', ['--silent', 'run', 'build'], { cwd: dir, stdio: 'inherit' });
  if (run.status !== 0) {
    process.stderr.write(`building @analytics-chart/${name} failed\n`);
    process.exit(run.status ?? 1);
  }
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  rebuiltBefore = true;
}
