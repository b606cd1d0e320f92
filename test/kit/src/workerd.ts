/**
 * Workers code under workerd, as the harnesses run it: a line-wise capture of workerd's output,
 * and a wrangler project (its `wrangler.toml`) run locally as `wrangler dev` would: its `main`
 * bundled with esbuild (the element bundle as text, like wrangler's `Text` rule) and served with
 * miniflare on 127.0.0.1 with the given bindings and the Durable Objects `wrangler.toml` binds.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { Miniflare } from 'miniflare';

/**
 * A miniflare `handleRuntimeStdio` that appends workerd's output to `logs` a whole line at a time
 * (a chunk may end mid-line), skipping blank lines.
 */
export function captureLines(logs: string[]) {
  const capture = (stream: NodeJS.ReadableStream) => {
    let pending = '';
    stream.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) logs.push(line);
    });
  };
  return (stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream) => {
    capture(stdout);
    capture(stderr);
  };
}

function wranglerToml(projectDir: string): string {
  return readFileSync(join(projectDir, 'wrangler.toml'), 'utf8');
}

/** `main` and `compatibility_date` of a project's `wrangler.toml` (what the local run needs). */
export function wranglerSettings(projectDir: string): { main: string; compatibilityDate: string } {
  const toml = wranglerToml(projectDir);
  const value = (key: string) => {
    const m = new RegExp(`^${key}\\s*=\\s*"([^"]+)"`, 'm').exec(toml);
    if (!m?.[1]) throw new Error(`wrangler.toml has no ${key}`);
    return m[1];
  };
  return { main: value('main'), compatibilityDate: value('compatibility_date') };
}

/** `[[durable_objects.bindings]]` of a project's `wrangler.toml`: binding name to class name. */
export function durableObjectBindings(projectDir: string): Record<string, string> {
  const toml = wranglerToml(projectDir);
  const bindings: Record<string, string> = {};
  for (const section of toml.split(/^\[\[durable_objects\.bindings\]\]\s*$/m).slice(1)) {
    const body = section.split(/^\[/m)[0] ?? '';
    const name = /^name\s*=\s*"([^"]+)"/m.exec(body)?.[1];
    const className = /^class_name\s*=\s*"([^"]+)"/m.exec(body)?.[1];
    if (!name || !className)
      throw new Error('wrangler.toml: a durable object binding lacks name or class_name');
    bindings[name] = className;
  }
  return bindings;
}
/** Loads `analytics-chart.js` as a text module, as wrangler's `Text` rule does. */
const bundleAsText: Plugin = {
  name: 'element-bundle-as-text',
  setup(b) {
    b.onLoad({ filter: /[\\/]analytics-chart\.js$/ }, (args) => ({
      contents: readFileSync(args.path, 'utf8'),
      loader: 'text',
    }));
  },
};

/** The bundled Worker: its script, and the source files that put bytes into it. */
export interface WorkerBundle {
  script: string;
  /** Paths (relative to the working directory) of the files the script has code from. */
  sources: string[];
}

/** Bundles a project's Worker into one ES module, as wrangler would for workerd. */
export async function bundleWorker(projectDir: string): Promise<WorkerBundle> {
  const built = await build({
    entryPoints: [join(projectDir, wranglerSettings(projectDir).main)],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    mainFields: ['module', 'main'],
    conditions: ['workerd', 'worker', 'browser'],
    plugins: [bundleAsText],
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const script = built.outputFiles[0]?.text;
  if (!script) throw new Error('esbuild produced no Worker script');
  const sources = Object.values(built.metafile.outputs).flatMap((output) =>
    Object.entries(output.inputs)
      .filter(([, input]) => input.bytesInOutput > 0)
      .map(([path]) => path),
  );
  return { script, sources };
}

/** The Worker running under workerd. */
export interface LocalWorker {
  /** Origin of the Worker, e.g. `http://127.0.0.1:43121`; the edge is at `${origin}/analytics`. */
  origin: string;
  /** Lines the Worker wrote to its console (the edge's JSON logs). */
  logs: string[];
  close(): Promise<void>;
}

/** Starts a project's bundled Worker under workerd with these bindings (vars and secrets alike). */
export async function runUnderWorkerd(
  projectDir: string,
  bindings: Record<string, string>,
): Promise<LocalWorker> {
  const { script } = await bundleWorker(projectDir);
  const logs: string[] = [];
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: wranglerSettings(projectDir).compatibilityDate,
    bindings,
    durableObjects: durableObjectBindings(projectDir),
    host: '127.0.0.1',
    port: 0,
    handleRuntimeStdio: captureLines(logs),
  });
  const url = await mf.ready;
  return { origin: url.origin, logs, close: () => mf.dispose() };
}
