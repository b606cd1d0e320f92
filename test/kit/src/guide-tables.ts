/**
 * Reads a table out of a markdown guide, so that a test can hold each of its cells against what
 * the test observed.
 */
import { readFileSync } from 'node:fs';

/** A markdown table: its header cells and its rows of cells, as written. */
export interface GuideTable {
  header: string[];
  rows: string[][];
}

function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((cell) => cell.trim());
}

/** The first table after the heading whose text is `heading` in the markdown file. */
export function tableUnder(file: string, heading: string): GuideTable {
  const lines = readFileSync(file, 'utf8').split('\n');
  const at = lines.findIndex(
    (line) => /^#{1,6} /.test(line) && line.replace(/^#+ /, '').trim() === heading,
  );
  if (at < 0) throw new Error(`${file} has no heading "${heading}"`);
  const start = lines.findIndex((line, i) => i > at && line.startsWith('|'));
  const next = lines.findIndex((line, i) => i > at && /^#{1,6} /.test(line));
  if (start < 0 || (next >= 0 && next < start)) throw new Error(`no table under "${heading}"`);
  const block: string[] = [];
  for (let i = start; i < lines.length && lines[i]?.startsWith('|'); i++)
    block.push(lines[i] ?? '');
  const [header, rule, ...rows] = block;
  if (!header || !rule || !/^\|[\s|:-]+\|$/.test(rule.trim())) {
    throw new Error(`the table under "${heading}" has no header row`);
  }
  return { header: cells(header), rows: rows.map(cells) };
}

/** A cell as a word to compare: emphasis and check marks dropped, lower case. */
export function cellWord(cell: string): string {
  return cell.replace(/[*✓✗]/g, '').trim().toLowerCase();
}
