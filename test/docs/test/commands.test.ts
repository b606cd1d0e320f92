import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { markdown, root } from './support/markdown-files.ts';

/**
 * Command lines the documents give users, checked against what the packages support on the
 * documented minimum Node (20.19): there, `npx analytics-edge` cannot load a TypeScript config
 * unless tsx is imported (`pnpm edge` in this repository runs under tsx, so it may).
 */

/** Shell commands with their continuation lines joined, from a Markdown text. */
function commandLines(text: string): string[] {
  return text
    .replace(/\s*\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.replace(/^[\s>`-]*/, ''));
}

/** The commands that ask plain Node for a TypeScript config, which Node 20 refuses. */
function typescriptConfigOnPlainNode(lines: string[]): string[] {
  return lines.filter(
    (line) =>
      /\bnpx (--no )?analytics-edge\b/.test(line) &&
      /--config\s+\S+\.(ts|mts|cts)\b/.test(line) &&
      !/NODE_OPTIONS=['"]?--import[= ]tsx/.test(line),
  );
}

describe('documented commands', () => {
  it('never ask plain Node 20 for a TypeScript config', () => {
    const found = markdown.flatMap((file) =>
      typescriptConfigOnPlainNode(commandLines(readFileSync(`${root}${file}`, 'utf8'))).map(
        (line) => `${file}: ${line}`,
      ),
    );
    expect(found).toEqual([]);
  });

  it('the check itself catches the command the CMS guide once gave', () => {
    const guide = `\`\`\`sh
npx analytics-edge sign --public --query public-events --param tenant=acme \\
  --config analytics-edge.config.ts --keys .data/edge-signing-keys
\`\`\`
NODE_OPTIONS=--import=tsx npx analytics-edge sign --config analytics-edge.config.ts --public`;
    expect(typescriptConfigOnPlainNode(commandLines(guide))).toEqual([
      'npx analytics-edge sign --public --query public-events --param tenant=acme --config analytics-edge.config.ts --keys .data/edge-signing-keys',
    ]);
  });
});
