#!/usr/bin/env node
/**
 * `pnpm test`: runs every workspace package's `test` script one after another (all of them, even
 * after a failure, so one run shows every broken package), streams their output, and closes with
 * one line totalling the runners' own summaries: `Total: N passed, N failed`. Exits non-zero when
 * any package fails or when no test ran at all.
 */
import { spawn } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';

// vitest: "      Tests  2 failed | 466 passed (468)"
const VITEST = /^\s*Tests\s+(?:(\d+) failed\s*\|\s*)?(?:(\d+) passed)?/;
// @web/test-runner progress: "Chrome: |████| 9/9 test files | 110 passed, 0 failed"
const WTR_PROGRESS = /test files \| (\d+) passed, (\d+) failed/;
const WTR_DONE = /^Finished running tests/;

const totals = { passed: 0, failed: 0, runs: 0 };
let wtr = null;
let pending = '';

function count(line) {
  const plain = stripVTControlCharacters(line).replaceAll('\r', '');
  const vitest = VITEST.exec(plain);
  if (vitest && (vitest[1] || vitest[2])) {
    totals.failed += Number(vitest[1] ?? 0);
    totals.passed += Number(vitest[2] ?? 0);
    totals.runs++;
    return;
  }
  const progress = [...plain.matchAll(new RegExp(WTR_PROGRESS, 'g'))].at(-1);
  if (progress) wtr = { passed: Number(progress[1]), failed: Number(progress[2]) };
  if (WTR_DONE.test(plain.trim()) && wtr) {
    totals.passed += wtr.passed;
    totals.failed += wtr.failed;
    totals.runs++;
    wtr = null;
  }
}

function read(chunk, out) {
  out.write(chunk);
  pending += chunk.toString('utf8');
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) count(line);
}

const child = spawn(
  'pnpm',
  ['-r', '--workspace-concurrency=1', '--no-bail', '--reporter-hide-prefix', 'test'],
  { stdio: ['ignore', 'pipe', 'pipe'] },
);
child.stdout.on('data', (chunk) => read(chunk, process.stdout));
child.stderr.on('data', (chunk) => read(chunk, process.stderr));
child.on('close', (code, signal) => {
  if (pending) count(pending);
  const failedRun = code !== 0 || signal !== null;
  console.log(`\n${totals.runs} test runs`);
  console.log(`Total: ${totals.passed} passed, ${totals.failed} failed`);
  if (totals.passed + totals.failed === 0) {
    console.error('No test ran.');
    process.exit(1);
  }
  process.exit(failedRun || totals.failed > 0 ? 1 : 0);
});
