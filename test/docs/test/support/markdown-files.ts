import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository's root, with a trailing slash. */
export const root = fileURLToPath(new URL('../../../../', import.meta.url));

/** Every Markdown file git tracks, by its path from the root. */
export const markdown = execFileSync('git', ['ls-files', '*.md', '**/*.md'], {
  cwd: root,
  encoding: 'utf8',
})
  .split('\n')
  .filter(Boolean);
