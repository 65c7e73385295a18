/**
 * The fenced code blocks of a Markdown file, with their language, the 1-based line of their first
 * code line, and the docs test's marker: an HTML comment on the last non-blank line before the
 * fence,
 *
 *   <!-- readme-test: typecheck-only (needs an API key) -->
 *
 * `typecheck-only` needs a reason in parentheses. Any other `readme-test:` comment is an error, so
 * a misspelt marker cannot quietly change what is tested.
 */

export type BlockMode = 'run' | 'typecheck-only';

export interface CodeBlock {
  /** The fence's info string up to its first space (`ts`, `sh`, or '' for none). */
  lang: string;
  /** 1-based line in the file of the block's first code line. */
  line: number;
  code: string;
  mode: BlockMode;
  /** Why the block is only type-checked. */
  reason?: string;
}

const MARKER = /^<!--\s*readme-test:\s*(.*?)\s*-->$/;
const TYPECHECK_ONLY = /^typecheck-only \((.+)\)$/;

export function codeBlocks(markdown: string, page = 'README.md'): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  let lastText = '';
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    const fence = /^(`{3,}|~{3,})\s*([^\s`]*)/.exec(text);
    if (fence === null) {
      if (text.trim() !== '') lastText = text.trim();
      continue;
    }
    const close = fence[1]!;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !lines[end]!.startsWith(close)) end++;
    const block: CodeBlock = { lang: fence[2]!, line: start + 1, code: lines.slice(start, end).join('\n'), mode: 'run' };
    const marker = MARKER.exec(lastText);
    if (marker !== null) {
      const only = TYPECHECK_ONLY.exec(marker[1]!);
      if (only === null) throw new Error(`${page}:${start}: unknown readme-test marker "${marker[1]}"`);
      block.mode = 'typecheck-only';
      block.reason = only[1]!;
    }
    blocks.push(block);
    i = end;
    lastText = '';
  }
  return blocks;
}

/** TypeScript blocks: the ones the docs test type-checks (and runs unless marked). */
export function isTypeScript(block: CodeBlock): boolean {
  return block.lang === 'ts' || block.lang === 'typescript';
}

/** Shell blocks: their `curl` lines are checked. */
export function isShell(block: CodeBlock): boolean {
  return block.lang === 'sh' || block.lang === 'bash' || block.lang === 'shell' || block.lang === 'console';
}
