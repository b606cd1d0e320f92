/**
 * Runs the Worker of this example locally under workerd, as `wrangler dev` would: bundles
 * `wrangler.toml`'s `main` with esbuild (the element bundle as text, like wrangler's `Text`
 * rule) and serves it with miniflare on 127.0.0.1 with the given bindings and the Durable
 * Objects `wrangler.toml` binds.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { Miniflare } from 'miniflare';

const HERE = new URL('../', import.meta.url);

/** `main` and `compatibility_date` of `wrangler.toml` (the two settings the local run needs). */
export function wranglerSettings(): { main: string; compatibilityDate: string } {
  const toml = readFileSync(new URL('wrangler.toml', HERE), 'utf8');
  const value = (key: string) => {
    const m = new RegExp(`^${key}\\s*=\\s*"([^"]+)"`, 'm').exec(toml);
    if (!m?.[1]) throw new Error(`wrangler.toml has no ${key}`);
    return m[1];
  };
  return { main: value('main'), compatibilityDate: value('compatibility_date') };
}

/** `[[durable_objects.bindings]]` of `wrangler.toml`: binding name to class name. */
export function durableObjectBindings(): Record<string, string> {
  const toml = readFileSync(new URL('wrangler.toml', HERE), 'utf8');
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

/** Bundles the Worker into one ES module, as wrangler would for workerd. */
export async function bundleWorker(): Promise<WorkerBundle> {
  const built = await build({
    entryPoints: [fileURLToPath(new URL(wranglerSettings().main, HERE))],
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

/** Starts the bundled Worker under workerd with these bindings (vars and secrets alike). */
export async function runUnderWorkerd(bindings: Record<string, string>): Promise<LocalWorker> {
  const { script } = await bundleWorker();
  const logs: string[] = [];
  const capture = (stream: NodeJS.ReadableStream) => {
    let pending = '';
    stream.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) logs.push(line);
    });
  };
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: wranglerSettings().compatibilityDate,
    bindings,
    durableObjects: durableObjectBindings(),
    host: '127.0.0.1',
    port: 0,
    handleRuntimeStdio(stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream) {
      capture(stdout);
      capture(stderr);
    },
  });
  const url = await mf.ready;
  return { origin: url.origin, logs, close: () => mf.dispose() };
}
