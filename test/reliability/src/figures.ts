/**
 * Prints each item's figures as a plain-text table on stdout (so `pnpm test:reliability` shows
 * them) and keeps them as JSON under `test-results/` (git-ignored) for the README.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { budget } from './profile.ts';

const RESULTS_DIR = join(import.meta.dirname, '..', 'test-results');

/** A cell of a figures table. */
export type Cell = string | number | boolean | null | undefined;

function show(cell: Cell): string {
  if (cell === null || cell === undefined) return '-';
  if (typeof cell === 'number') {
    return Number.isInteger(cell) ? cell.toLocaleString('en-US') : cell.toFixed(2);
  }
  return String(cell);
}

/** Formats rows under a header as aligned columns (numbers right-aligned). */
export function formatTable(title: string, header: readonly string[], rows: readonly Cell[][]) {
  const text = [header.map(String), ...rows.map((row) => row.map(show))];
  const widths = header.map((_, i) => Math.max(...text.map((row) => (row[i] ?? '').length)));
  const numeric = header.map((_, i) => rows.every((row) => typeof row[i] === 'number'));
  const line = (row: string[]) =>
    row
      .map((cell, i) => (numeric[i] ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [
    `\n== ${title} (${budget().name}) ==`,
    line(text[0] ?? []),
    rule,
    ...text.slice(1).map(line),
  ]
    .join('\n')
    .concat('\n');
}

/** Prints a table on stdout and stores it with the raw figures as `test-results/<name>.json`. */
export function reportFigures(
  name: string,
  title: string,
  header: readonly string[],
  rows: readonly Cell[][],
  raw: Record<string, unknown> = {},
): void {
  process.stdout.write(formatTable(title, header, rows));
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(
    join(RESULTS_DIR, `${name}.${budget().name}.json`),
    `${JSON.stringify({ title, profile: budget().name, at: new Date().toISOString(), header, rows, ...raw }, null, 2)}\n`,
  );
}
