import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './pack.ts';

/**
 * The code blocks of a package README that a consumer test runs, each marked by the HTML comment
 * `<!-- consumer-test: NAME -->` on the line before its fence (invisible on npm). Answers the
 * block's text by NAME.
 */
export function readmeBlocks(packageName: string): Map<string, string> {
  return readmeBlocksAt(join('packages', packageName, 'README.md'));
}

/** The marked blocks of any README of the repository, by its path from the root. */
export function readmeBlocksAt(path: string): Map<string, string> {
  const text = readFileSync(join(REPO, path), 'utf8');
  const blocks = new Map<string, string>();
  for (const m of text.matchAll(
    /<!-- consumer-test: ([\w./-]+) -->\n```[a-z]*\n([\s\S]*?)\n```/g,
  )) {
    if (m[1] && m[2] !== undefined) blocks.set(m[1], `${m[2]}\n`);
  }
  return blocks;
}

/** One marked README block; throws when the README lost it. */
export function readmeBlock(packageName: string, name: string): string {
  const block = readmeBlocks(packageName).get(name);
  if (block === undefined) {
    throw new Error(`packages/${packageName}/README.md has no block marked consumer-test: ${name}`);
  }
  return block;
}

/** Splits a README shell line into its leading `NAME=value` assignments and its argv. */
export function shellLine(line: string): { env: Record<string, string>; argv: string[] } {
  const words = line.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (words[0] && /^[A-Z_][A-Z0-9_]*=/.test(words[0])) {
    const word = words.shift() as string;
    const eq = word.indexOf('=');
    env[word.slice(0, eq)] = word.slice(eq + 1);
  }
  return { env, argv: words };
}
