import { generateDemoData } from '../demo/generate-demo-data.ts';
import { ProgressBar } from './progress-bar.ts';
import { resolveUserPath } from './resolve-path.ts';
import { integerOption, stringOption, UsageError, workspaceOption } from './usage-error.ts';

/** `demo-data`: writes the seeded demo workspace (replacing it with `--force`). */
export async function demoDataCommand(
  options: Record<string, string | boolean | undefined>,
): Promise<number> {
  const dataDir = resolveUserPath(stringOption(options.data, '.data'));
  const events = integerOption('events', options.events, 1_000_000);
  if (events < 1) throw new UsageError('--events must be at least 1');
  const workspace = workspaceOption(options.workspace);
  const bar = new ProgressBar();
  const started = performance.now();
  try {
    const result = await generateDemoData({
      dataDir,
      workspace,
      events,
      seed: integerOption('seed', options.seed, 42),
      replace: options.force === true,
      onProgress: (written, total) =>
        bar.update(written / total, `${written.toLocaleString('en-US')} events`),
    });
    bar.clear();
    if (result.skipped) {
      process.stdout.write(
        `${result.file} already holds demo events; pass --force to replace it\n`,
      );
      return 0;
    }
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(
      `wrote ${result.events.toLocaleString('en-US')} demo events to ${result.file} in ${seconds.toFixed(1)} s\n`,
    );
    return 0;
  } finally {
    bar.clear();
  }
}
