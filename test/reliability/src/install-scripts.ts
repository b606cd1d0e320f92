/**
 * Which installed packages carry install-time scripts, read from the files pnpm actually put
 * under `node_modules/.pnpm` (not from the lockfile, which pnpm 10 no longer marks), and which
 * ones `pnpm-workspace.yaml` lets build or explicitly ignores.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The lifecycle scripts npm and pnpm run when a package is installed. */
export const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'] as const;

/** A package with install-time work: its name, version and what would run. */
export interface BuildingPackage {
  name: string;
  version: string;
  scripts: string[];
}

/** Every package in `<root>/node_modules/.pnpm` with an install script or a `binding.gyp`. */
export function packagesWithInstallScripts(root: string): BuildingPackage[] {
  const store = join(root, 'node_modules', '.pnpm');
  const found = new Map<string, BuildingPackage>();
  for (const entry of readdirSync(store)) {
    const modules = join(store, entry, 'node_modules');
    if (!existsSync(modules)) continue;
    // The entry is `name@version(peers…)`, scoped names as `@scope+name@…`.
    const name = entry.replace(/@[^@]*$/, '').replace('+', '/');
    const dir = join(modules, name);
    const manifest = join(dir, 'package.json');
    if (!existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as {
      name?: string;
      version?: string;
      scripts?: Record<string, string>;
    };
    const scripts = INSTALL_SCRIPTS.filter((s) => typeof pkg.scripts?.[s] === 'string').map(
      (s) => `${s}: ${pkg.scripts?.[s]}`,
    );
    // npm and pnpm run `node-gyp rebuild` for a package with binding.gyp and no install script.
    if (scripts.length === 0 && existsSync(join(dir, 'binding.gyp'))) {
      scripts.push('install (implicit): node-gyp rebuild');
    }
    if (scripts.length > 0) {
      const key = `${pkg.name}@${pkg.version}`;
      found.set(key, { name: pkg.name ?? name, version: pkg.version ?? '?', scripts });
    }
  }
  return [...found.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** A top-level list setting of `pnpm-workspace.yaml` (`key: []`, `key: [a, b]` or `- item` lines). */
export function workspaceList(yaml: string, key: string): string[] {
  const lines = yaml.split('\n');
  const at = lines.findIndex((line) => line.startsWith(`${key}:`));
  if (at < 0) return [];
  const inline = /^[^:]+:\s*\[(.*)\]\s*(#.*)?$/.exec(lines[at] ?? '');
  if (inline) {
    return (inline[1] ?? '')
      .split(',')
      .map((s) => s.trim().replace(/^['"]|['"]$/g, ''))
      .filter(Boolean);
  }
  const items: string[] = [];
  for (const line of lines.slice(at + 1)) {
    const item = /^\s+-\s+['"]?([^'"#\s]+)['"]?/.exec(line);
    if (item?.[1]) items.push(item[1]);
    else if (line.trim() !== '' && !line.trim().startsWith('#')) break;
  }
  return items;
}

/** Entries of the lockfile's `packages:` section and how each resolves. */
export function lockfileResolutions(lockfile: string): { name: string; resolution: string }[] {
  const section = lockfile.split(/^packages:\s*$/m)[1]?.split(/^snapshots:\s*$/m)[0] ?? '';
  const out: { name: string; resolution: string }[] = [];
  let current: string | undefined;
  for (const line of section.split('\n')) {
    const entry = /^ {2}'?([^'\s][^']*?)'?:\s*$/.exec(line);
    if (entry?.[1]) current = entry[1];
    const resolution = /^ {4}resolution:\s*(.*)$/.exec(line);
    if (resolution?.[1] && current) out.push({ name: current, resolution: resolution[1] });
  }
  return out;
}

/** Each importer (workspace package path) of the lockfile with its dependency specifiers. */
export function lockfileImporters(lockfile: string): Map<string, Map<string, string>> {
  const section = lockfile.split(/^importers:\s*$/m)[1]?.split(/^packages:\s*$/m)[0] ?? '';
  const importers = new Map<string, Map<string, string>>();
  let importer: Map<string, string> | undefined;
  let dependency: string | undefined;
  for (const line of section.split('\n')) {
    const path = /^ {2}'?([^'\s][^']*?)'?:\s*$/.exec(line);
    if (path?.[1]) {
      importer = new Map();
      importers.set(path[1], importer);
      continue;
    }
    const name = /^ {6}'?([^'\s][^']*?)'?:\s*$/.exec(line);
    if (name?.[1]) dependency = name[1];
    const specifier = /^ {8}specifier:\s*'?([^']*?)'?\s*$/.exec(line);
    if (specifier?.[1] !== undefined && dependency && importer)
      importer.set(dependency, specifier[1]);
  }
  return importers;
}
