import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { markdownPages, ROOT } from './docs-pages.ts';

// Every page's relative links resolve: the file exists, and an `#anchor` names a heading of that
// page (GitHub's slugs). Every path of this repository a page names in its prose
// (`src/recall/chat/chat-service.ts`, `bench/compact.ts`, `test/programs/`) exists, so a page
// cannot point at code that moved. Code blocks are left out: their paths are a program's.

/** The text of `markdown` outside fenced code blocks, one entry per line (blank lines inside). */
function prose(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence === undefined && open !== null) {
      fence = open[1]!;
      return '';
    }
    if (fence !== undefined) {
      if (line.trim().startsWith(fence)) fence = undefined;
      return '';
    }
    return line;
  });
}

/** GitHub's anchor of a heading: lowercased, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const text = heading[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

const LINK = /\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;
const REPO_PATH = /(?<![\w./-])((?:src|supervisors|bench|test|scripts|examples|docs|config)\/[\w@./-]*[\w/])/g;

/** Paths a page may name that a user or a run makes: not in the repository. */
const MADE_LATER = [
  'config/llm.yaml', // the user's copy of config/llm.example.yaml (gitignored)
  'docs/api/', // npm run docs
  'bench/results/facts.json', // npx tsx bench/facts.ts
];

interface Problem {
  page: string;
  line: number;
  what: string;
}

function problemsOf(page: string): Problem[] {
  const markdown = readFileSync(join(ROOT, page), 'utf8');
  const problems: Problem[] = [];
  prose(markdown).forEach((text, i) => {
    const line = i + 1;
    for (const [, target] of text.matchAll(LINK)) {
      if (/^[a-z][a-z+.-]*:/i.test(target!)) continue; // https:, mailto:
      const [path, anchor] = target!.split('#') as [string, string | undefined];
      const file = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), decodeURIComponent(path));
      if (!existsSync(file)) {
        problems.push({ page, line, what: `link to ${target}: no ${relative(ROOT, file)}` });
        continue;
      }
      if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(readFileSync(file, 'utf8')).has(decodeURIComponent(anchor))) {
        problems.push({ page, line, what: `link to ${target}: no heading #${anchor} in ${relative(ROOT, file)}` });
      }
    }
    // Paths named in prose (link targets are checked above, relative to the page).
    for (const [, path] of text.replace(LINK, ' ').matchAll(REPO_PATH)) {
      const clean = path!.replace(/[.]+$/, '');
      if (clean.includes('*') || clean.includes('<') || MADE_LATER.includes(clean)) continue;
      if (!existsSync(join(ROOT, clean))) problems.push({ page, line, what: `names ${clean}, which does not exist` });
      else if (clean.endsWith('/') && !statSync(join(ROOT, clean)).isDirectory()) problems.push({ page, line, what: `names ${clean} as a folder` });
    }
  });
  return problems;
}

describe('links and paths of README.md and docs/', () => {
  const pages = markdownPages();

  it('reads the README and the docs pages', () => {
    expect(pages).toContain('README.md');
    expect(pages).toContain('docs/README.md');
  });

  it('anchors follow GitHub: lowercase, punctuation dropped, repeats numbered', () => {
    expect([...anchorsOf('# Exactly-once appends\n## `mnemo` (serve)\n## A\n## A\n```\n# not a heading\n```')]).toEqual([
      'exactly-once-appends',
      'mnemo-serve',
      'a',
      'a-1',
    ]);
  });

  for (const page of pages) {
    it(`${page}: every relative link resolves and every repository path it names exists`, () => {
      expect(problemsOf(page).map((p) => `${p.page}:${p.line}: ${p.what}`)).toEqual([]);
    });
  }
});
