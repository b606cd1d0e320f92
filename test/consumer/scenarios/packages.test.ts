/**
 * The tarballs as a registry would receive them, and what an npm install of them leaves in
 * node_modules: compiled JavaScript with types, no workspace ranges, nothing that needs tsx.
 */
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { PACKAGES } from '../harness/pack.ts';
import { runOk } from '../harness/processes.ts';
import { readmeBlock, shellLine } from '../harness/readme.ts';
import { installed } from '../harness/scratch.ts';

const { tarballs, root } = inject('consumer');

interface Manifest {
  name: string;
  version: string;
  license?: string;
  exports?: Record<string, unknown>;
  bin?: Record<string, string>;
  files?: string[];
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  publishConfig?: unknown;
}

const contents = new Map<string, { files: string[]; manifest: Manifest }>();

beforeAll(async () => {
  for (const name of PACKAGES) {
    const tarball = tarballs[name];
    const list = await runOk('tar', ['-tzf', tarball], { cwd: '/' });
    const json = await runOk('tar', ['-xzOf', tarball, 'package/package.json'], { cwd: '/' });
    contents.set(name, {
      files: list.stdout
        .split('\n')
        .filter(Boolean)
        .map((f) => f.replace(/^package\//, '')),
      manifest: JSON.parse(json.stdout) as Manifest,
    });
  }
});

/** Every file path an `exports` value names, with the condition order of each entry. */
function exportTargets(value: unknown, out: { paths: string[]; orders: string[][] }) {
  if (typeof value === 'string') out.paths.push(value);
  else if (value && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.every((k) => !k.startsWith('.'))) out.orders.push(keys);
    for (const inner of Object.values(value)) exportTargets(inner, out);
  }
  return out;
}

describe.each(PACKAGES)('the %s tarball', (name) => {
  it('ships built JavaScript, types and the license, and no sources, tests or tsconfig', () => {
    const { files } = contents.get(name) ?? { files: [] };
    expect(files).toContain('LICENSE');
    expect(files).toContain('README.md');
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    expect(files.filter((f) => /(^|\/)(test|tests|src)\//.test(f))).toEqual([]);
    expect(files.filter((f) => /tsconfig|\.tsbuildinfo$|vite\.config|\.cjs$/.test(f))).toEqual([]);
    expect(files.some((f) => f.endsWith('.d.ts'))).toBe(true);
  });

  it('has a publishable package.json: versions instead of workspace ranges, exports into dist', () => {
    const { files, manifest } = contents.get(name) ?? { files: [], manifest: {} as Manifest };
    const ranges = {
      ...manifest.dependencies,
      ...manifest.peerDependencies,
      ...manifest.devDependencies,
    };
    expect(Object.entries(ranges).filter(([, r]) => r.startsWith('workspace:'))).toEqual([]);
    for (const [dep, range] of Object.entries(manifest.dependencies ?? {})) {
      if (dep.startsWith('@analytics-chart/')) expect(range).toBe(manifest.version);
    }
    expect(manifest.dependencies?.tsx).toBeUndefined();
    expect(manifest.license).toBe('MIT');
    expect(manifest.publishConfig).toBeUndefined();
    const { paths, orders } = exportTargets(manifest.exports, { paths: [], orders: [] });
    expect(paths.length).toBeGreaterThan(0);
    for (const path of [...paths, ...Object.values(manifest.bin ?? {})]) {
      expect(files, `${path} is exported`).toContain(path.replace(/^\.\//, ''));
    }
    for (const order of orders) if (order.includes('types')) expect(order[0]).toBe('types');
  });
});

it('lists the packages in an order that publishes each after its dependencies', () => {
  const seen = new Set<string>();
  for (const name of PACKAGES) {
    const deps = Object.keys(contents.get(name)?.manifest.dependencies ?? {});
    for (const dep of deps.filter((d) => d.startsWith('@analytics-chart/'))) {
      expect(seen, `${name} needs ${dep} published first`).toContain(dep);
    }
    seen.add(`@analytics-chart/${name}`);
  }
});

it('passes npm publish --dry-run for every tarball, in publish order', async () => {
  for (const name of PACKAGES) {
    const { manifest } = contents.get(name) ?? { manifest: {} as Manifest };
    const result = await runOk(
      'npm',
      ['publish', '--dry-run', '--access', 'public', tarballs[name]],
      {
        cwd: '/',
      },
    );
    expect(`${result.stdout}${result.stderr}`).toContain(`+ ${manifest.name}@${manifest.version}`);
  }
});

/** Files below `dir`, recursively, as paths relative to it. */
function walk(dir: string, prefix = ''): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? walk(path, `${prefix}${entry}/`) : [`${prefix}${entry}`];
  });
}

describe.each(['node-host-app', 'engine-service'])('npm install of %s', (project) => {
  it('leaves no TypeScript sources and no tsx in node_modules', async () => {
    const dir = await installed(project);
    const ours = join(dir, 'node_modules/@analytics-chart');
    const files = walk(ours);
    expect(files.length).toBeGreaterThan(10);
    expect(files.filter((f) => /\.(ts|mts|cts)$/.test(f) && !/\.d\.(ts|mts|cts)$/.test(f))).toEqual(
      [],
    );
    expect(existsSync(join(dir, 'node_modules/tsx'))).toBe(false);
    const lock = readFileSync(join(dir, 'package-lock.json'), 'utf8');
    expect(lock).not.toMatch(/"node_modules\/tsx"/);
  });
});

describe.each(['element', 'edge'] as const)("the %s README's install from tarballs", (name) => {
  it('installs its tarball beside the protocol one alone, and the package then loads', async () => {
    const line = readmeBlock(name, 'tarball-install').trim();
    const dir = mkdtempSync(join(root, `tarball-${name}-`));
    writeFileSync(
      join(dir, 'package.json'),
      '{ "name": "fresh", "private": true, "type": "module" }\n',
    );
    // The tarballs lie beside the project under the names the README writes, which must be the
    // names pnpm pack gives them (a version bump without the README's fails here).
    const { argv } = shellLine(line);
    const files = argv.filter((arg) => arg.endsWith('.tgz'));
    expect(files.length).toBeGreaterThan(1);
    const byFile = new Map(PACKAGES.map((p) => [basename(tarballs[p]), tarballs[p]]));
    for (const file of files) {
      const tarball = byFile.get(basename(file));
      expect(tarball, `${file} is not a tarball pnpm pack makes`).toBeDefined();
      copyFileSync(tarball as string, join(dir, file));
    }
    await runOk(
      argv[0] as string,
      [...argv.slice(1), '--no-audit', '--no-fund', '--prefer-offline'],
      {
        cwd: dir,
        timeoutMs: 300_000,
      },
    );
    // npm ls exits non-zero on a missing or invalid dependency anywhere in the tree.
    await runOk('npm', ['ls', '--all'], { cwd: dir });
    if (name === 'edge') {
      const probe =
        "const m = await import('@analytics-chart/edge'); console.log(typeof m.createEdge);";
      const out = await runOk(process.execPath, ['--input-type=module', '-e', probe], { cwd: dir });
      expect(out.stdout.trim()).toBe('function');
    }
  });
});
