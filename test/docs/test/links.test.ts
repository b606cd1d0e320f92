import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import GithubSlugger from 'github-slugger';
import { describe, expect, it } from 'vitest';
import { markdown, root } from './support/markdown-files.ts';

/** The text outside fenced code blocks and inline code, where a bracket is not a link. */
function prose(text: string): string {
  return withoutFences(text).replace(/`[^`\n]*`/g, '');
}

/** The text without fenced code blocks (indented ones too, as inside list items). */
function withoutFences(text: string): string {
  return text.replace(/^[ \t]*(```|~~~)[^\n]*\n[\s\S]*?^[ \t]*\1[^\n]*$/gm, '');
}

/** Link targets: inline `[text](target)`, reference definitions `[x]: target`, and `href`/`src`. */
function targets(text: string): string[] {
  const found: string[] = [];
  const body = prose(text);
  for (const m of body.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
    found.push(m[1] as string);
  for (const m of body.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm))
    found.push(m[1] as string);
  for (const m of body.matchAll(/\b(?:href|src)="([^"]+)"/g)) found.push(m[1] as string);
  return found;
}

const anchorsOf = new Map<string, Set<string>>();
/** GitHub's heading anchors of a Markdown file, as github-slugger computes them. */
function anchors(file: string): Set<string> {
  let set = anchorsOf.get(file);
  if (!set) {
    const slugger = new GithubSlugger();
    set = new Set();
    for (const m of withoutFences(readFileSync(file, 'utf8')).matchAll(
      /^#{1,6}\s+(.+?)\s*#*\s*$/gm,
    )) {
      const heading = (m[1] as string).replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replaceAll('`', '');
      set.add(slugger.slug(heading));
    }
    anchorsOf.set(file, set);
  }
  return set;
}

function problem(source: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return null; // absolute URL
  const [path = '', anchor] = target.split('#');
  const file =
    path === '' ? resolve(root, source) : resolve(dirname(resolve(root, source)), decodeURI(path));
  const inside = relative(root, file);
  if (inside.startsWith('..')) return `${target} leaves the repository`;
  if (path.startsWith('/')) return `${target} is absolute; write it relative to ${source}`;
  if (!existsSync(file)) return `${target} does not exist`;
  if (anchor && statSync(file).isFile() && file.endsWith('.md') && !anchors(file).has(anchor)) {
    return `${target}: no heading #${anchor} in ${inside}`;
  }
  return null;
}

describe('documents', () => {
  it('finds the repository Markdown files', () => {
    expect(markdown).toContain('README.md');
    expect(markdown).toContain('docs/query-id.md');
  });

  it('every relative link resolves to a file and heading inside the repository', () => {
    const broken: string[] = [];
    for (const source of markdown) {
      for (const target of targets(readFileSync(resolve(root, source), 'utf8'))) {
        const why = problem(source, target);
        if (why) broken.push(`${source}: ${why}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('no tracked file refers to a document that lives outside the repository', () => {
    const files = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter((f) => /\.(md|ts|mts|mjs|cjs|js|json|html)$/.test(f) && !f.startsWith('test/docs/'));
    const outside = /\b(?:DESIGN|SPEC|STYLE)\.md\b|\.\.\/shared\//;
    const found = files.filter((f) => outside.test(readFileSync(resolve(root, f), 'utf8')));
    expect(found).toEqual([]);
  });

  it('the checker itself catches a missing file, a missing heading and a link out of the clone', () => {
    expect(problem('README.md', 'docs/nowhere.md')).toMatch(/does not exist/);
    expect(problem('README.md', 'docs/query-id.md#no-such-heading')).toMatch(/no heading/);
    expect(problem('packages/edge/README.md', '../../../shared/SPEC.md')).toMatch(/leaves/);
    expect(problem('README.md', 'docs/query-id.md#test-vectors')).toBeNull();
    expect(targets('see `[a](nope.md)` and\n```\n[b](nope.md)\n```\n[c](yes.md)')).toEqual([
      'yes.md',
    ]);
  });
});
