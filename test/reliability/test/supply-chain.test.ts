/**
 * Item 6: the supply chain. `pnpm audit --prod` (which needs the registry's advisory endpoint),
 * the lockfile committed and in step with every workspace package, every locked package pinned
 * by a sha512 integrity from the registry, and no package with install-time scripts beyond the
 * ones `pnpm-workspace.yaml` lists explicitly.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { type Cell, reportFigures } from '../src/figures.ts';
import {
  lockfileImporters,
  lockfileResolutions,
  packagesWithInstallScripts,
  workspaceList,
} from '../src/install-scripts.ts';
import { REPO_ROOT } from '../src/repo-paths.ts';

const lockfile = readFileSync(join(REPO_ROOT, 'pnpm-lock.yaml'), 'utf8');
const workspaceYaml = readFileSync(join(REPO_ROOT, 'pnpm-workspace.yaml'), 'utf8');
const rows: Cell[][] = [];

test('pnpm audit --prod: clean, or the advisory endpoint is unreachable (said so)', () => {
  const run = spawnSync('pnpm', ['audit', '--prod', '--json'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  let report: {
    error?: { code?: string; message?: string };
    advisories?: Record<string, unknown>;
  } = {};
  try {
    report = JSON.parse(run.stdout);
  } catch {
    report = { error: { code: 'NO_JSON', message: (run.stderr || run.stdout).slice(0, 300) } };
  }
  if (report.error) {
    rows.push([
      'pnpm audit --prod',
      `not run: ${report.error.code} (${report.error.message?.slice(0, 160)})`,
    ]);
    // Only a failure to reach the endpoint excuses a missing audit, not a malformed run.
    expect(report.error.code).toMatch(/AUDIT|FETCH|NETWORK|ENOTFOUND|ECONN|ETIMEDOUT|NO_JSON/);
  } else {
    const advisories = Object.keys(report.advisories ?? {});
    rows.push(['pnpm audit --prod', `${advisories.length} advisories`]);
    expect(advisories).toEqual([]);
  }
});

test('the lockfile is committed and in step with every workspace package', () => {
  const tracked = execFileSync('git', ['ls-files', 'pnpm-lock.yaml', 'pnpm-workspace.yaml'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  expect(tracked.split('\n').filter(Boolean)).toEqual(['pnpm-lock.yaml', 'pnpm-workspace.yaml']);
  const importers = lockfileImporters(lockfile);
  const dirs: string[] = ['.'];
  for (const pattern of workspaceList(workspaceYaml, 'packages')) {
    if (pattern.endsWith('/*')) {
      const parent = pattern.slice(0, -2);
      for (const name of readdirSync(join(REPO_ROOT, parent))) {
        if (existsSync(join(REPO_ROOT, parent, name, 'package.json')))
          dirs.push(`${parent}/${name}`);
      }
    } else dirs.push(pattern);
  }
  const mismatches: string[] = [];
  for (const dir of dirs) {
    const locked = importers.get(dir);
    if (!locked) {
      mismatches.push(`${dir}: not in the lockfile`);
      continue;
    }
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, dir, 'package.json'), 'utf8')) as Record<
      string,
      Record<string, string> | undefined
    >;
    const declared = { ...pkg.dependencies, ...pkg.devDependencies, ...pkg.optionalDependencies };
    for (const [name, spec] of Object.entries(declared)) {
      if (locked.get(name) !== spec)
        mismatches.push(`${dir}: ${name} ${spec} locked as ${locked.get(name)}`);
    }
    for (const name of locked.keys()) {
      if (!(name in declared)) mismatches.push(`${dir}: ${name} locked but not declared`);
    }
  }
  rows.push([
    'lockfile',
    `committed; ${dirs.length} workspace packages, ${mismatches.length} out of step`,
  ]);
  expect(mismatches).toEqual([]);
});

test('every locked package is pinned by a sha512 integrity (no git, tarball or file sources)', () => {
  const resolutions = lockfileResolutions(lockfile);
  const unpinned = resolutions.filter(
    (r) => !/^\{integrity: sha512-[A-Za-z0-9+/=]+\}$/.test(r.resolution),
  );
  rows.push([
    'lockfile integrity',
    `${resolutions.length} packages, ${unpinned.length} without sha512`,
  ]);
  expect(resolutions.length).toBeGreaterThan(100);
  expect(unpinned).toEqual([]);
});

test('no install scripts beyond the lists in pnpm-workspace.yaml', () => {
  const allowed = workspaceList(workspaceYaml, 'onlyBuiltDependencies');
  const ignored = workspaceList(workspaceYaml, 'ignoredBuiltDependencies');
  const found = packagesWithInstallScripts(REPO_ROOT);
  const locked = new Set(lockfileResolutions(lockfile).map((r) => r.name));
  // Only what the lockfile installs now (the store may hold leftovers of older installs).
  const current = found.filter((p) => locked.has(`${p.name}@${p.version}`));
  const unlisted = current.filter((p) => !allowed.includes(p.name) && !ignored.includes(p.name));
  for (const p of current) {
    const listed = allowed.includes(p.name)
      ? 'allowed to build'
      : ignored.includes(p.name)
        ? 'listed as ignored'
        : 'NOT LISTED';
    rows.push([`install script: ${p.name}@${p.version}`, `${p.scripts.join('; ')} — ${listed}`]);
  }
  rows.push([
    'onlyBuiltDependencies',
    allowed.length ? allowed.join(', ') : 'none: nothing builds at install',
  ]);
  // Nothing may build at install time: DuckDB ships its binaries as per-platform packages.
  expect(allowed).toEqual([]);
  expect(current.filter((p) => p.name.startsWith('@duckdb/'))).toEqual([]);
  expect(unlisted).toEqual([]);
});

/** name@version of every package in a `pnpm list --json` tree. */
function flatten(
  tree: Record<string, { version?: string; dependencies?: Record<string, unknown> }> | undefined,
  into: Set<string>,
) {
  for (const [name, node] of Object.entries(tree ?? {})) {
    if (node.version && !node.version.startsWith('link:')) into.add(`${name}@${node.version}`);
    flatten(node.dependencies as Parameters<typeof flatten>[0], into);
  }
}

test('the production dependency tree of the deployable packages, listed for review', () => {
  const filters = [
    '@analytics-chart/edge',
    '@analytics-chart/engine',
    '@analytics-chart/protocol',
    '@analytics-chart/element',
  ];
  const out = execFileSync(
    'pnpm',
    [
      'list',
      '--prod',
      '-r',
      '--json',
      '--depth',
      'Infinity',
      ...filters.flatMap((f) => ['--filter', f]),
    ],
    {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      maxBuffer: 64 * 2 ** 20,
    },
  );
  const projects = JSON.parse(out) as Array<{
    name: string;
    dependencies?: Parameters<typeof flatten>[0];
  }>;
  const all = new Set<string>();
  for (const project of projects) flatten(project.dependencies, all);
  prodPackages = [...all].sort();
  rows.push([
    'production dependencies (edge, engine, protocol, element)',
    `${prodPackages.length} packages: ${prodPackages
      .filter((p) => !p.startsWith('@types/'))
      .slice(0, 12)
      .join(', ')}${prodPackages.length > 12 ? ', …' : ''}`,
  ]);
  expect(prodPackages.some((p) => p.startsWith('hono@'))).toBe(true);
  expect(prodPackages.some((p) => p.startsWith('@duckdb/node-api@'))).toBe(true);
});

let prodPackages: string[] = [];

afterAll(() => {
  reportFigures('supply-chain', 'Supply chain', ['check', 'result'], rows, {
    productionPackages: prodPackages,
  });
});
