import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeBlocks, isShell, isTypeScript, type CodeBlock } from './markdown-blocks.ts';
import { markdownPages } from './docs-pages.ts';

// Every TypeScript block of README.md and of docs/**/*.md, and every script of examples/, is type-checked (strict, the repo's tsconfig) and, unless
// marked `<!-- readme-test: typecheck-only (reason) -->`, run in its own child process with tsx,
// in a fresh directory (its `./data`), which must exit 0. The blocks are written inside the repo
// (`.tmp/`) beside their own build of this package (node_modules/mnemo: package.json and a
// dist/ from scripts/build.mjs), so that `from 'mnemo'` resolves through the package's own
// `exports` to compiled JavaScript, as for a user, and never to a dist/ that another test's
// `npm pack` is rewriting. Shell
// blocks: every URL on a curl line is plain ASCII (curl sends raw bytes, which servers refuse).

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORK = join(ROOT, '.tmp', `docs-examples-${process.pid}`);
const RUN_TIMEOUT_MS = 90_000;
const PARALLEL_RUNS = 2;

/** A block and the page it is on (`README.md`, `docs/guides/facts.md`). */
interface PageBlock extends CodeBlock {
  page: string;
}

const blocks: PageBlock[] = markdownPages().flatMap((page) => codeBlocks(readFileSync(join(ROOT, page), 'utf8'), page).map((b) => ({ ...b, page })));
/** The scripts of examples/, each run whole like a block (they import `mnemo` too). */
const exampleScripts: PageBlock[] = readdirSync(join(ROOT, 'examples'))
  .filter((f) => f.endsWith('.ts'))
  .sort()
  .map((f) => ({ page: `examples/${f}`, lang: 'ts', line: 1, mode: 'run', code: readFileSync(join(ROOT, 'examples', f), 'utf8') }));
const tsBlocks = [...blocks.filter(isTypeScript), ...exampleScripts];
const fileOf = (b: PageBlock): string => join(WORK, b.page.replace(/\.(md|ts)$/, '').replace(/[/.]/g, '_'), `line-${b.line}`, 'example.ts');

interface RunResult {
  code: number | null;
  signal: string | null;
  output: string;
}

/** The environment of a block: no API keys or server settings leak in from the test's own. */
function blockEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('OPENAI_') || k.startsWith('MNEMO_') || k === 'DATABASE_URL' || k.startsWith('VITEST') || k === 'NODE_OPTIONS') continue;
    env[k] = v;
  }
  return env;
}

function runBlock(b: PageBlock): Promise<RunResult> {
  const file = fileOf(b);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: dirname(file), env: blockEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    const timer = setTimeout(() => {
      output += `\n[killed: still running after ${RUN_TIMEOUT_MS} ms: does the block stop what it starts?]`;
      child.kill('SIGKILL');
    }, RUN_TIMEOUT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
}

/** Runs `work` over `items`, at most `limit` at a time (the machine has few cores). */
async function pooled<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<Map<T, R>> {
  const results = new Map<T, R>();
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++]!;
      results.set(item, await work(item));
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/** Type-checks every block in one program with the repo's compiler options; messages by block. */
function typeCheck(): Map<PageBlock, string[]> {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const program = ts.createProgram(tsBlocks.map(fileOf), parsed.options);
  const byFile = new Map<string, PageBlock>(tsBlocks.map((b) => [fileOf(b), b]));
  const found = new Map<PageBlock, string[]>(tsBlocks.map((b) => [b, []]));
  // The blocks' own diagnostics, not the whole program's: the sources they import are checked
  // by `npm run check`, and checking them again here would triple the time.
  const all = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...tsBlocks.flatMap((b) => {
      const file = program.getSourceFile(fileOf(b))!;
      return [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
    }),
  ];
  for (const d of all) {
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    const block = d.file === undefined ? undefined : byFile.get(d.file.fileName);
    if (block === undefined || d.file === undefined || d.start === undefined) {
      // Not in a block (a compiler option, a global type): every block fails with it.
      const where = d.file === undefined ? '' : `${relative(ROOT, d.file.fileName)}: `;
      for (const list of found.values()) list.push(`${where}${text}`);
      continue;
    }
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    found.get(block)!.push(`${block.page}:${block.line + line}:${character + 1}: TS${d.code}: ${text}`);
  }
  return found;
}

let diagnostics: Map<PageBlock, string[]>;
let runs: Map<PageBlock, RunResult>;

/** The package as installed: its package.json and a fresh build, under WORK/node_modules. */
function installOwnBuild(): void {
  const pkg = join(WORK, 'node_modules', 'mnemo');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, 'package.json'), readFileSync(join(ROOT, 'package.json')));
  // WORK's own scope, so that the blocks do not self-reference the checkout (whose dist/ may be
  // missing or half-written) but find node_modules/mnemo; dependencies resolve from the repo's.
  writeFileSync(join(WORK, 'package.json'), '{ "name": "mnemo-readme-examples", "private": true, "type": "module" }\n');
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs'), '--out', join(pkg, 'dist')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`build for the docs examples failed:\n${r.stdout}${r.stderr}`);
}

beforeAll(async () => {
  rmSync(WORK, { recursive: true, force: true });
  installOwnBuild();
  for (const b of tsBlocks) {
    mkdirSync(dirname(fileOf(b)), { recursive: true });
    // `export {}` makes every block a module, so top-level await works and blocks without
    // imports do not share one global scope in the type check.
    writeFileSync(fileOf(b), `${b.code}\nexport {};\n`);
  }
  // Children first: they run while the (synchronous) type check holds this thread.
  const running = pooled(tsBlocks.filter((b) => b.mode === 'run'), PARALLEL_RUNS, runBlock);
  diagnostics = typeCheck();
  runs = await running;
}, 300_000);

afterAll(() => {
  rmSync(WORK, { recursive: true, force: true });
});

describe('TypeScript examples of the README and docs/', () => {
  it('has TypeScript examples to check', () => {
    expect(tsBlocks.length).toBeGreaterThan(20);
    expect(new Set(tsBlocks.map((b) => b.page)).size).toBeGreaterThan(10);
    expect(exampleScripts.map((b) => b.page)).toContain('examples/agent-quickstart.ts');
  });

  for (const b of tsBlocks) {
    const first = b.code.split('\n').find((l) => l.trim() !== '' && !l.startsWith('import')) ?? '';
    const label = `${b.page}:${b.line} (${first.trim().slice(0, 50)})`;

    it(`${label} type-checks`, () => {
      expect(diagnostics.get(b)).toEqual([]);
    });

    if (b.mode === 'run') {
      it(`${label} runs and exits 0`, () => {
        const r = runs.get(b)!;
        expect({ code: r.code, signal: r.signal, output: r.code === 0 ? '' : r.output }).toEqual({ code: 0, signal: null, output: '' });
      });
    } else {
      it.skip(`${label} runs (typecheck-only: ${b.reason})`, () => {});
    }
  }
});

describe('shell examples of the README and docs/', () => {
  const curlLines = blocks
    .filter(isShell)
    .flatMap((b) =>
      b.code
        .replace(/\\\n\s*/g, ' ')
        .split('\n')
        .filter((l) => /^\s*curl\s/.test(l))
        .map((l) => l.replace(/\s+#.*$/, '')),
    );

  it('has curl lines to check', () => {
    expect(curlLines.length).toBeGreaterThan(5);
  });

  it('puts no raw non-ASCII character in the URL of a curl line (percent-encode, or -G --data-urlencode)', () => {
    const urls = curlLines.flatMap((l) => l.split(/\s+/).filter((w) => /localhost|127\.0\.0\.1|:\/\//.test(w)));
    expect(urls.length).toBeGreaterThanOrEqual(curlLines.length);
    expect(urls.filter((u) => /[^\x21-\x7e]/.test(u))).toEqual([]);
  });

  it('sends --data-urlencode as a query string (-G) on GET requests', () => {
    const posting = (l: string): boolean => /\s(-d|--data|--data-raw|-X)\s/.test(l);
    expect(curlLines.filter((l) => l.includes('--data-urlencode') && !posting(l) && !/\s-G\s|\s--get\s/.test(l))).toEqual([]);
  });
});
