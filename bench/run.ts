/**
 * `pnpm bench [name…]`: runs the named benchmark suites (all when none is named). Each suite is a
 * module `bench/<name>/main.ts` exporting `run(args)`, and prints its own table of medians and
 * ratios against a baseline measured in the same run.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SUITES = ['engine', 'edge', 'element'] as const;
const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const named = args.filter((a) => (SUITES as readonly string[]).includes(a));
const rest = args.filter((a) => !named.includes(a));

for (const suite of named.length ? named : SUITES) {
  const entry = join(here, suite, 'main.ts');
  if (!existsSync(entry)) {
    console.log(`\n# ${suite}: no benchmark yet (${entry})`);
    continue;
  }
  console.log(`\n# ${suite}`);
  const mod = (await import(pathToFileURL(entry).href)) as { run(args: string[]): Promise<void> };
  await mod.run(rest);
}
