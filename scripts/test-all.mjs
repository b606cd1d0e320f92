#!/usr/bin/env node
/**
 * `pnpm test`: runs every workspace package's `test` script, all of them even after a failure, so
 * one run shows every broken package. Packages run side by side (TEST_CONCURRENCY, default 2),
 * the longest first: most suites spend much of their time waiting on servers, browsers and npm,
 * so two at a time keep both cores busy. A package much longer than the others runs as the
 * parts its manifest lists (PARTS), each a run of its own, so no one run outlasts the rest.
 * Suites that time themselves (ALONE) run last, alone.
 * Each package's output is printed whole when it ends, then one line totals the runners' own
 * summaries (`Total: N passed, N failed`) and the run's time, the build of stale packages first
 * included. Exits non-zero when any package fails or when no test ran at all.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// The last run's times, to start the longest first; a guess until there is one.
const timesFile = join(root, 'node_modules/.cache/test-all/times.json');
const GUESS = {
  '@analytics-chart/engine test:clickhouse': 300,
  '@analytics-chart/engine test:duckdb': 200,
  '@analytics-chart/consumer-tests': 150,
  '@analytics-chart/reliability': 130,
  '@analytics-chart/consumer-frameworks': 110,
  '@analytics-chart/e2e': 100,
  '@analytics-chart/wordpress-tests': 90,
  '@analytics-chart/edge': 70,
  '@analytics-chart/element': 30,
};

/**
 * Packages whose `test` script runs as these scripts of theirs instead, each queued on its own:
 * the engine's two drivers are independent suites that together outlast every other package.
 */
const PARTS = {
  '@analytics-chart/engine': ['test:duckdb', 'test:clickhouse'],
};

// vitest: "      Tests  2 failed | 466 passed (468)"
const VITEST = /^\s*Tests\s+(?:(\d+) failed\s*\|\s*)?(?:(\d+) passed)?/;
// @web/test-runner progress: "Chrome: |████| 9/9 test files | 110 passed, 0 failed"
const WTR_PROGRESS = /test files \| (\d+) passed, (\d+) failed/;
const WTR_DONE = /^Finished running tests/;

/**
 * Totals the runners' summary lines of one package's output: each vitest run's `Tests` line, and
 * @web/test-runner's last progress line once it says it finished (it prints its summary on both
 * streams, so counting each would count it twice).
 */
function summarize(output) {
  const totals = { passed: 0, failed: 0, runs: 0 };
  let wtr = null;
  let wtrDone = false;
  for (const line of output.split('\n')) {
    const plain = stripVTControlCharacters(line).replaceAll('\r', '');
    const vitest = VITEST.exec(plain);
    if (vitest && (vitest[1] || vitest[2])) {
      totals.failed += Number(vitest[1] ?? 0);
      totals.passed += Number(vitest[2] ?? 0);
      totals.runs++;
      continue;
    }
    const progress = [...plain.matchAll(new RegExp(WTR_PROGRESS, 'g'))].at(-1);
    if (progress) wtr = { passed: Number(progress[1]), failed: Number(progress[2]) };
    if (WTR_DONE.test(plain.trim())) wtrDone = true;
  }
  if (wtr && wtrDone) {
    totals.passed += wtr.passed;
    totals.failed += wtr.failed;
    totals.runs++;
  }
  return totals;
}

/**
 * The part of a package's output that says what failed: vitest's "Failed Tests" section (or its
 * FAIL lines), else the output's end; at most FAILURE_LINES lines.
 */
const FAILURE_LINES = 80;
function failureReport(output) {
  const lines = stripVTControlCharacters(output).replaceAll('\r', '').split('\n');
  const section = lines.findIndex((line) => /⎯ Failed (Tests|Suites) \d+ ⎯/.test(line));
  if (section >= 0) return lines.slice(section, section + FAILURE_LINES).join('\n');
  const fails = lines.filter((line) => /^\s*(FAIL|×|✗)\s/.test(line));
  if (fails.length) return fails.slice(0, FAILURE_LINES).join('\n');
  return lines.slice(-FAILURE_LINES).join('\n');
}

/** `1m 05s` */
function duration(ms) {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
}

/** The workspace packages that have a `test` script, a package with PARTS once per part. */
function testedPackages() {
  const listed = JSON.parse(
    execFileSync('pnpm', ['-r', 'ls', '--depth', '-1', '--json'], { cwd: root, encoding: 'utf8' }),
  );
  return listed
    .filter((p) => p.path !== root)
    .map((p) => ({ name: p.name, dir: p.path }))
    .flatMap(({ name, dir }) => {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      if (typeof manifest.scripts?.test !== 'string') return [];
      const parts = PARTS[name] ?? [];
      if (parts.some((script) => typeof manifest.scripts[script] !== 'string')) {
        throw new Error(`${name} lacks one of its test parts: ${parts.join(', ')}`);
      }
      if (parts.length === 0) return [{ name, dir, script: 'test' }];
      return parts.map((script) => ({ name: `${name} ${script}`, dir, script }));
    });
}

function readTimes() {
  try {
    return JSON.parse(readFileSync(timesFile, 'utf8'));
  } catch {
    return {};
  }
}

// GNU time, where installed, adds each package's CPU time (its processes and theirs) to the report.
const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

/** The CPU seconds GNU time wrote to `file`, or null. */
function cpuSeconds(file) {
  try {
    const [user, system] = readFileSync(file, 'utf8').trim().split('\n').at(-1).split(' ');
    const total = Number(user) + Number(system);
    return Number.isFinite(total) ? total : null;
  } catch {
    return null;
  } finally {
    rmSync(file, { force: true });
  }
}

/** Runs one package's tests; resolves to its output, exit status, time and CPU time. */
function runPackage({ name, dir, script }) {
  const started = Date.now();
  const cpuFile = join(tmpdir(), `test-all-${process.pid}-${name.replace(/\W/g, '_')}.cpu`);
  const [command, ...args] = [
    ...(GNU_TIME ? [GNU_TIME, '-f', '%U %S', '-o', cpuFile] : []),
    'pnpm',
    '--silent',
    script,
  ];
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('close', (code, signal) => {
      resolve({
        name,
        dir,
        output,
        ok: code === 0 && signal === null,
        ms: Date.now() - started,
        cpu: GNU_TIME ? cpuSeconds(cpuFile) : null,
      });
    });
  });
}

/**
 * Suites that time what they test (latency, memory, time limits under hostile input), and run
 * alone after the others: beside another suite on two cores their limits measure the neighbour.
 */
const ALONE = new Set(['@analytics-chart/reliability']);

const started = Date.now();
// The packages' dist/ that is missing or older than its sources, built before any suite reads it.
const build = spawnSync(process.execPath, [join(root, 'scripts/build-packages.mjs')], {
  stdio: 'inherit',
});
if (build.status !== 0) {
  console.error(`Building the packages failed; no test ran (${duration(Date.now() - started)}).`);
  process.exit(1);
}

const concurrency = Math.max(1, Number(process.env.TEST_CONCURRENCY) || 2);
const previous = readTimes();
const weight = (name) => previous[name] ?? GUESS[name] ?? 10;
const packages = testedPackages().sort((a, b) => weight(b.name) - weight(a.name));
const queue = packages.filter((p) => !ALONE.has(p.name));
const alone = packages.filter((p) => ALONE.has(p.name));
const results = [];
const short = (list) => list.map((p) => p.name.replace('@analytics-chart/', '')).join(', ');
console.log(
  `pnpm test: ${packages.length} packages, ${concurrency} at a time: ${short(queue)}; then alone: ${short(alone)}`,
);

async function lane(from) {
  for (let next = from.shift(); next; next = from.shift()) {
    console.log(`▶ ${next.name} (${relative(root, next.dir)})`);
    const result = await runPackage(next);
    const totals = summarize(result.output);
    results.push({ ...result, ...totals });
    const mark = result.ok && totals.failed === 0 ? '✓' : '✗';
    process.stdout.write(
      `\n${'─'.repeat(8)} ${mark} ${result.name}: ${totals.passed} passed, ${totals.failed} failed, ${duration(result.ms)} ${'─'.repeat(8)}\n${result.output}\n`,
    );
  }
}

await Promise.all(Array.from({ length: concurrency }, () => lane(queue)));
await lane(alone);

const total = results.reduce(
  (sum, r) => ({
    passed: sum.passed + r.passed,
    failed: sum.failed + r.failed,
    runs: sum.runs + r.runs,
  }),
  { passed: 0, failed: 0, runs: 0 },
);
const broken = results.filter((r) => !r.ok || r.failed > 0);
try {
  mkdirSync(dirname(timesFile), { recursive: true });
  writeFileSync(
    timesFile,
    JSON.stringify(Object.fromEntries(results.map((r) => [r.name, Math.round(r.ms / 1000)]))),
  );
} catch {
  // Only the next run's order depends on it.
}

// A failed package's own failure report again, last: the end of a long run's log is what gets read.
for (const r of broken) {
  console.log(
    `\n${'─'.repeat(8)} why ${r.name} failed ${'─'.repeat(8)}\n${failureReport(r.output)}`,
  );
}

console.log('\nPackage times (wall, and CPU where GNU time is installed):');
for (const r of [...results].sort((a, b) => b.ms - a.ms)) {
  const cpu = r.cpu === null ? '' : `cpu ${duration(r.cpu * 1000)}`;
  console.log(
    `  ${r.ok && r.failed === 0 ? '✓' : '✗'} ${duration(r.ms).padStart(7)} ${cpu.padStart(11)}  ${r.name}`,
  );
}
console.log(`\n${total.runs} test runs`);
console.log(`Total: ${total.passed} passed, ${total.failed} failed`);
if (broken.length) console.log(`Failed: ${broken.map((r) => r.name).join(', ')}`);
const cpu = results.every((r) => r.cpu !== null)
  ? `, CPU ${duration(results.reduce((sum, r) => sum + r.cpu, 0) * 1000)}`
  : '';
console.log(
  `Total time: ${duration(Date.now() - started)} (${concurrency} packages at a time${cpu})`,
);
if (total.passed + total.failed === 0) {
  console.error('No test ran.');
  process.exit(1);
}
process.exit(broken.length > 0 ? 1 : 0);
