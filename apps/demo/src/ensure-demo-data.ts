import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The demo workspace's name: the engine CLI's default, file `<dataDir>/engine/default.duckdb`. */
export const DEMO_WORKSPACE = 'default';

/**
 * The engine's directory under the demo's data directory: `.data/engine`, where the edge's
 * `nodeEdgeConfig` also looks by default, so the demo workspace serves a self-hosted edge too.
 */
export function engineDataDir(dataDir: string): string {
  return join(dataDir, 'engine');
}

/** The engine's `analytics-engine` command, as the engine package's `bin` names it. */
export function engineCliPath(): string {
  const manifestPath = createRequire(import.meta.url).resolve(
    '@analytics-chart/engine/package.json',
  );
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    bin?: Record<string, string>;
  };
  const bin = manifest.bin?.['analytics-engine'];
  if (!bin) throw new Error('the engine package names no analytics-engine command');
  return join(dirname(manifestPath), bin);
}

/** What the demo records about the data it generated (`<dataDir>/demo-data.json`). */
interface DemoDataMarker {
  generatedAt: string;
  events: number;
  /** False while generating: an interrupted run (Ctrl-C) is redone on the next start. */
  complete: boolean;
}

/** How the demo workspace is checked and made. */
export interface DemoDataOptions {
  dataDir: string;
  events: number;
  /** Regenerate demo data older than this many hours (0: never). */
  maxAgeHours: number;
  /** Regenerate now, whatever its age. */
  fresh: boolean;
  say: (line: string) => void;
}

/** What {@link ensureDemoData} found or did. */
export interface DemoDataState {
  generated: boolean;
  /** When the demo data ends (its "now"), when known. */
  generatedAt?: Date;
}

function readMarker(path: string): DemoDataMarker | undefined {
  try {
    const marker = JSON.parse(readFileSync(path, 'utf8')) as Partial<DemoDataMarker>;
    if (typeof marker.generatedAt === 'string' && typeof marker.events === 'number') {
      return { ...(marker as DemoDataMarker), complete: marker.complete !== false };
    }
  } catch {
    // No marker: data the demo did not make, left alone.
  }
  return undefined;
}

/**
 * Makes sure the demo workspace exists: runs the engine's own `demo-data` command (seeded events
 * over the 90 days before now, with its progress bar) when the workspace file is missing, or when
 * the demo made it more than `maxAgeHours` ago, so "last 24 hours" is never an empty chart. A
 * workspace the demo did not make (no marker file) is never replaced.
 */
export async function ensureDemoData(options: DemoDataOptions): Promise<DemoDataState> {
  const engineDir = engineDataDir(options.dataDir);
  const file = join(engineDir, `${DEMO_WORKSPACE}.duckdb`);
  const markerPath = join(engineDir, 'demo-data.json');
  const marker = readMarker(markerPath);
  const exists = existsSync(file);
  let replace = false;
  if (exists) {
    if (!marker) return { generated: false };
    const generatedAt = new Date(marker.generatedAt);
    const ageHours = (Date.now() - generatedAt.getTime()) / 3_600_000;
    const stale = options.maxAgeHours > 0 && ageHours > options.maxAgeHours;
    if (marker.complete && !options.fresh && !stale) return { generated: false, generatedAt };
    replace = true;
    options.say(
      !marker.complete
        ? 'The last demo data run was interrupted; starting it again.'
        : options.fresh
          ? 'Regenerating the demo data (--fresh).'
          : `The demo data ends ${Math.round(ageHours)} hours ago; regenerating it so recent charts are not empty.`,
    );
  }
  const count = options.events.toLocaleString('en-US');
  options.say(
    `Generating the demo workspace: ${count} events over the last 90 days into ${file} (about ${Math.max(2, Math.round(options.events / 60_000))} s, once).`,
  );
  const generatedAt = new Date();
  const pending: DemoDataMarker = {
    generatedAt: generatedAt.toISOString(),
    events: options.events,
    complete: false,
  };
  await mkdir(engineDir, { recursive: true });
  writeFileSync(markerPath, `${JSON.stringify(pending)}\n`);
  const engineCli = engineCliPath();
  const args = ['demo-data', '--data', engineDir, '--events', String(options.events)];
  // --force also replaces a half-written workspace left by an interrupted run.
  if (replace) args.push('--force');
  const code = await new Promise<number | null>((resolve, reject) => {
    // The engine's CLI draws its progress bar on our terminal.
    const child = spawn(process.execPath, [engineCli, ...args], { stdio: 'inherit' });
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) throw new Error(`the engine's demo-data command failed (exit code ${code})`);
  writeFileSync(markerPath, `${JSON.stringify({ ...pending, complete: true })}\n`);
  return { generated: true, generatedAt };
}
