/**
 * The pages the docs tests read: README.md and every Markdown file under docs/ (but the
 * generated API reference, docs/api/), as paths relative to the repository's root, sorted.
 * A page is a contract: its examples run, its links resolve, its figures match bench/results.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export function markdownPages(): string[] {
  const found = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (relative(ROOT, path) !== join('docs', 'api')) walk(path);
      } else if (entry.name.endsWith('.md')) found.push(relative(ROOT, path));
    }
  };
  walk(join(ROOT, 'docs'));
  return found.sort();
}
