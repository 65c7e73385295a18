import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './docs-pages.ts';

// docs/reference/cli.md against the program: every flag and environment variable that a
// command's --help names is on the page, in that command's section.

const PAGE = readFileSync(join(ROOT, 'docs', 'reference', 'cli.md'), 'utf8');

function help(args: string[]): string {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), ...args, '--help'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, MNEMO_LOG_LEVEL: 'silent' } });
  if (r.status !== 0) throw new Error(`mnemo ${args.join(' ')} --help exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** The page's section for a command: from its heading to the next `## `. */
function section(heading: string): string {
  const start = PAGE.indexOf(`## ${heading}`);
  if (start < 0) throw new Error(`no section "## ${heading}"`);
  const end = PAGE.indexOf('\n## ', start + 3);
  return PAGE.slice(start, end < 0 ? undefined : end);
}

const names = (text: string): string[] => [...new Set([...text.matchAll(/(?<![\w-])(--[a-z][a-z0-9-]*|MNEMO_[A-Z_]+|OPENAI_[A-Z_]+)/g)].map((m) => m[1]!))].sort();

describe('docs/reference/cli.md', () => {
  for (const [command, args, heading] of [
    ['mnemo', [], '`mnemo` (serve)'],
    ['mnemo compact', ['compact'], '`mnemo compact`'],
    ['mnemo migrate', ['migrate'], '`mnemo migrate`'],
    ['mnemo mcp', ['mcp'], '`mnemo mcp`'],
  ] as const) {
    it(`names every flag and variable of \`${command} --help\` in its section`, () => {
      const text = section(heading);
      // The serve help's usage lines of the other commands belong to their sections.
      const own = help([...args]).split('\n').filter((l) => args.length > 0 || !/^\s*(Usage: )?mnemo (compact|migrate|mcp)\b/.test(l));
      const named = names(own.join('\n'));
      expect(named.length).toBeGreaterThan(1);
      expect(named.filter((n) => !text.includes(`\`${n}\``))).toEqual([]);
    });
  }
});
