/**
 * `pnpm bench [name…] [options]`: runs the named benchmark suites (all when none is named). Each
 * suite is a module `bench/<name>/main.ts` exporting `run(args)`, and prints its own table of
 * medians and ratios against a baseline measured in the same run. What a suite prints is also
 * written to `bench/results/<name>.md` (replaced by every complete run), with the command that
 * reproduces it, the date and the machine, so READMEs can cite the latest figures. A run at
 * another size (`--events 10M`) writes `bench/results/<name>-<size>.md`, so the figures of each
 * size a target is judged at are kept side by side.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SUITES = ['engine', 'edge', 'element'] as const;
const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const named = args.filter((a) => (SUITES as readonly string[]).includes(a));
const rest = args.filter((a) => !named.includes(a));

/** Runs `body` while copying everything written to stdout (console.log and console.table too). */
async function captureStdout(body: () => Promise<void>): Promise<string> {
  const write = process.stdout.write.bind(process.stdout);
  let captured = '';
  process.stdout.write = ((chunk: string | Uint8Array, ...more: never[]) => {
    captured += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return write(chunk, ...more);
  }) as typeof process.stdout.write;
  try {
    await body();
  } finally {
    process.stdout.write = write;
  }
  return captured;
}

/**
 * The size named by `--events` in millions or thousands (`10000000` and `10m` are `10M`),
 * unless it is the default (1M), so that one size always writes one file.
 */
function sizeOf(options: readonly string[]): string | undefined {
  const at = options.indexOf('--events');
  const match = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(at >= 0 ? (options[at + 1] ?? '') : '');
  if (!match) return undefined;
  const events = Number(match[1]) * ({ k: 1e3, m: 1e6 }[(match[2] ?? '').toLowerCase()] ?? 1);
  if (events === 1e6) return undefined;
  return events % 1e6 === 0
    ? `${events / 1e6}M`
    : events % 1e3 === 0
      ? `${events / 1e3}K`
      : String(events);
}

/** The results file of one suite: how to reproduce it, when and where it ran, and its output. */
function resultsFile(suite: string, started: Date, load: number, output: string): string {
  const command = ['pnpm bench', suite, ...rest].join(' ');
  const cpu = cpus();
  return [
    `# \`${suite}\` benchmark: latest results`,
    '',
    `Written by \`${command}\` (\`bench/${suite}/main.ts\`); every complete run replaces this file.`,
    '',
    `- run: ${started.toISOString().slice(0, 16)}Z`,
    `- machine: ${cpu.length} × ${cpu[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, load average ${load.toFixed(2)} at the start`,
    '',
    '```text',
    output.replace(/\s+$/, ''),
    '```',
    '',
  ].join('\n');
}

for (const suite of named.length ? named : SUITES) {
  const entry = join(here, suite, 'main.ts');
  if (!existsSync(entry)) {
    console.log(`\n# ${suite}: no benchmark yet (${entry})`);
    continue;
  }
  console.log(`\n# ${suite}`);
  const mod = (await import(pathToFileURL(entry).href)) as { run(args: string[]): Promise<void> };
  const started = new Date();
  const load = loadavg()[0] ?? 0;
  const output = await captureStdout(() => mod.run(rest));
  // A quick check of one figure while working on it (`engine --bulk-only`,
  // `--rollup-ingest-only`) keeps no file.
  if (rest.includes('--bulk-only') || rest.includes('--rollup-ingest-only')) continue;
  mkdirSync(join(here, 'results'), { recursive: true });
  const size = sizeOf(rest);
  // A section run on its own (`engine --wide`, `--load-only`, `--scale` below 50M events) writes
  // a file of its own beside the suite's.
  const section = rest.includes('--wide')
    ? 'wide'
    : rest.includes('--load-only')
      ? ['load', size].filter(Boolean).join('-')
      : rest.includes('--scale')
        ? ['scale', size].filter(Boolean).join('-')
        : rest.includes('--ch-queries-only')
          ? ['ch-queries', size].filter(Boolean).join('-')
          : size;
  const file = join(here, 'results', section ? `${suite}-${section}.md` : `${suite}.md`);
  writeFileSync(file, resultsFile(suite, started, load, output));
  console.log(`\nwritten to ${file}`);
}
