import { describe, expect, it } from 'vitest';
import { codeBlocks } from './markdown-blocks.ts';

// How the README test finds its blocks and their markers.

describe('codeBlocks', () => {
  it('finds each fenced block with its language and the line of its first code line', () => {
    const md = ['# T', '', '```ts', 'const a = 1;', '```', 'text', '```sh', 'curl x', '```'].join('\n');
    expect(codeBlocks(md)).toEqual([
      { lang: 'ts', line: 4, code: 'const a = 1;', mode: 'run' },
      { lang: 'sh', line: 8, code: 'curl x', mode: 'run' },
    ]);
  });

  it('makes a block typecheck-only when the line before its fence is the marker, with its reason', () => {
    const md = ['<!-- readme-test: typecheck-only (needs an API key) -->', '```ts', 'x;', '```', '```ts', 'y;', '```'].join('\n');
    expect(codeBlocks(md).map((b) => [b.mode, b.reason])).toEqual([
      ['typecheck-only', 'needs an API key'],
      ['run', undefined],
    ]);
  });

  it('refuses a misspelt marker or one without a reason instead of running the block', () => {
    expect(() => codeBlocks('<!-- readme-test: typecheck (model) -->\n```ts\nx;\n```')).toThrow(/unknown readme-test marker/);
    expect(() => codeBlocks('<!-- readme-test: typecheck-only -->\n```ts\nx;\n```')).toThrow(/unknown readme-test marker/);
  });
});
