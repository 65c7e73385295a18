/**
 * Mnemo as a user installs it: `npm pack` of this checkout (prepack builds dist/), the tarball
 * installed into a fresh project offline (test/package/support/consumer-project.ts), then used
 * with plain Node (ESM import, CommonJS require, the `mnemo` bin) and type-checked by a strict
 * TypeScript consumer under each module resolution users pick. Nothing here runs the sources.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installConsumer, installedPackages, packCheckout, REPO } from './support/consumer-project.ts';

const repoPkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
  version: string;
  engines: { node: string };
};

let work: string;
let tarball: string;
let app: string;

function node(args: string[], cwd = app): string {
  return execFileSync(process.execPath, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * tsc's errors for the project in `dir`, with the library check on (skipLibCheck false), in the
 * consumer's code and in Mnemo's declarations. Errors inside other packages' own declarations
 * (xstate's and lmdb's under exactOptionalPropertyTypes) are theirs, not Mnemo's: left out.
 */
function typeErrors(dir: string): string[] {
  const tsc = join(app, 'node_modules', 'typescript', 'bin', 'tsc');
  let out = '';
  try {
    out = node([tsc, '-p', dir, '--pretty', 'false'], dir);
  } catch (err) {
    out = String((err as { stdout?: unknown }).stdout ?? err);
  }
  return out
    .split('\n')
    .filter((line) => /^\S.*\(\d+,\d+\): error /.test(line))
    .filter((line) => !line.startsWith('../node_modules/') || line.startsWith('../node_modules/mnemo/'));
}

/** The tarball's file list, from `tar tzf` (paths under package/). */
function tarballFiles(): string[] {
  return execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.replace(/^package\//, ''));
}

describe('the packed package in a fresh project', { timeout: 240_000 }, () => {
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'mnemo-consumer-'));
    tarball = packCheckout(join(work, 'pack'));
    app = join(work, 'app');
    // The LangGraph peers are what a `mnemo/langgraph` user adds; vitest is left out on purpose.
    installConsumer(app, tarball, ['typescript', '@types/node', '@langchain/core', '@langchain/langgraph-checkpoint'], 'module');
  }, 300_000);

  afterAll(() => {
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  it('ships dist, bin, the docs pages, README, LICENSE and CHANGELOG, and weighs at most 1 MB', () => {
    const files = tarballFiles();
    const tops = new Set(files.map((f) => f.split('/')[0]));
    expect([...tops].sort()).toEqual(['CHANGELOG.md', 'LICENSE', 'README.md', 'bin', 'dist', 'docs', 'package.json']);
    // The README's links work in the installed package too: every page it links to is in it.
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const linked = [...readme.matchAll(/(?<!!)\[[^\]]*\]\(([^)#:\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!);
    expect(linked.length).toBeGreaterThan(10);
    expect(linked.filter((target) => !files.includes(target))).toEqual([]);
    expect(files.filter((f) => f.startsWith('docs/') && !f.endsWith('.md'))).toEqual([]);
    expect(files).toContain('dist/esm/src/index.js');
    expect(files).toContain('dist/esm/src/index.d.ts');
    expect(files).toContain('dist/esm/src/index.js.map');
    // No declaration maps: they would point at src/*.ts, which the package does not ship.
    expect(files).not.toContain('dist/esm/src/index.d.ts.map');
    expect(files).toContain('dist/esm/src/recall/storage/lmdb/pool/search-worker.js');
    expect(files).toContain('dist/esm/src/server/public/index.html');
    expect(files).toContain('dist/cjs/index.js');
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    // The list above keeps foreign files out; the bound catches a stray large one (573 kB at index
    // format 3; 663 kB with mnemo/mcp, mnemo/ai-sdk, summaries, telemetry and the doc comments;
    // ~850 kB with the PostgreSQL recall adapter, the contract suites and docs/'s pages).
    expect(readFileSync(tarball).length).toBeLessThanOrEqual(1024 * 1024);
  });

  it('installs no TypeScript loader, bundler or test runner with Mnemo', () => {
    const names = new Set(installedPackages(app).map((p) => p.name));
    for (const tool of ['tsx', 'esbuild', 'vite', 'vitest', '@fastify/static']) expect(names.has(tool), tool).toBe(false);
  });

  it('has every installed package accept every Node version Mnemo supports', () => {
    const semver = createRequire(join(app, 'package.json'))('semver') as {
      subset(sub: string, sup: string): boolean;
    };
    const refusing = installedPackages(app).filter((p) => p.node !== undefined && !semver.subset(repoPkg.engines.node, p.node));
    expect(refusing).toEqual([]);
  });

  it('imports from plain Node as an ES module, with the search worker and static files from dist', () => {
    writeFileSync(
      join(app, 'esm.mjs'),
      `import { startRuntime, createSearchPool, MnemoError } from 'mnemo';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const dir = mkdtempSync(join(tmpdir(), 'mnemo-esm-'));
const runtime = await startRuntime({ dataDir: dir });
await runtime.memory.add('s1', [{ role: 'user', content: 'a needle in the hay' }]);
const got = await runtime.memory.get('s1');
await runtime.stop();
const pool = createSearchPool({ maxThreads: 1 });
const hits = await pool.run({ kind: 'session', path: dir, conversationId: 's1', keyword: 'needle', limit: 5 });
await pool.close();
console.log(JSON.stringify({ got, hits: hits.map((h) => h.message.content), error: typeof MnemoError }));
`,
    );
    expect(JSON.parse(node(['esm.mjs']))).toEqual({
      got: [{ role: 'user', content: 'a needle in the hay' }],
      hits: ['a needle in the hay'],
      error: 'function',
    });
  });

  it('loads with CommonJS require, sharing one copy of Mnemo with import', () => {
    writeFileSync(
      join(app, 'cjs.cjs'),
      `const mnemo = require('mnemo');
const langgraph = require('mnemo/langgraph');
import('mnemo').then((esm) => {
  console.log(JSON.stringify({
    startRuntime: typeof mnemo.startRuntime,
    saver: typeof langgraph.MnemoSaver,
    sameClass: esm.MnemoError === mnemo.MnemoError,
  }));
});
`,
    );
    expect(JSON.parse(node(['cjs.cjs']))).toEqual({ startRuntime: 'function', saver: 'function', sameClass: true });
  });

  it('runs the mnemo bin from compiled JavaScript: --version and --help', () => {
    const bin = join(app, 'node_modules', '.bin', 'mnemo');
    expect(execFileSync(bin, ['--version'], { cwd: app, encoding: 'utf8' })).toBe(`${repoPkg.version}\n`);
    expect(execFileSync(bin, ['--help'], { cwd: app, encoding: 'utf8' })).toContain('Usage: mnemo [serve] [options]');
  });

  it('serves the chat page from dist through the bin', async () => {
    const bin = join(app, 'node_modules', '.bin', 'mnemo');
    const child = spawn(bin, ['--port', '0', '--data-dir', join(work, 'served')], {
      cwd: app,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, OPENAI_API_KEY: '' },
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.setEncoding('utf8');
        child.stdout.on('data', (chunk: string) => {
          out += chunk;
          const m = /listening on (http:\/\/\S+?)["\s]/.exec(out);
          if (m?.[1] !== undefined) resolve(m[1]);
        });
        child.on('exit', (code) => reject(new Error(`mnemo exited ${code}: ${out}`)));
      });
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<html');
      const script = await fetch(`${url}/static/app.js`);
      expect(script.status).toBe(200);
      // The vendor builds resolve from the consumer's node_modules.
      for (const asset of ['/static/i18n.js', '/static/vendor/highlight.min.js', '/static/vendor/marked.esm.js']) {
        expect((await fetch(`${url}${asset}`)).status, asset).toBe(200);
      }
    } finally {
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  });

  const CONSUMER_TS = `import { startRuntime, createInMemoryStore, MnemoError, type Message, type RuntimeOptions } from 'mnemo';
import { MnemoSaver } from 'mnemo/langgraph';
import { describeMessageLogContract, type MakeStore } from 'mnemo/testing';
import type { MessageLog } from 'mnemo';

const options: RuntimeOptions = { dataDir: './data' };
export async function demo(): Promise<Message[]> {
  const runtime = await startRuntime(options);
  const saver = new MnemoSaver({ runtime });
  void saver;
  const store = createInMemoryStore();
  await store.add('s1', [{ role: 'user', content: 'hi' }]);
  try {
    return await runtime.memory.get('s1');
  } catch (err) {
    if (err instanceof MnemoError) console.error(err.code);
    throw err;
  } finally {
    await runtime.stop();
  }
}
export const make: MakeStore<MessageLog> = async () => ({ log: createInMemoryStore() });
export const suite: typeof describeMessageLogContract = describeMessageLogContract;
`;

  for (const [resolution, module] of [
    ['node16', 'node16'],
    ['nodenext', 'nodenext'],
    ['bundler', 'preserve'],
  ] as const) {
    it(`type-checks a tsc --strict consumer with exactOptionalPropertyTypes under moduleResolution ${resolution}`, () => {
      const dir = join(app, `ts-${resolution}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'consumer.ts'), CONSUMER_TS);
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module,
            moduleResolution: resolution,
            strict: true,
            exactOptionalPropertyTypes: true,
            noUncheckedIndexedAccess: true,
            skipLibCheck: false,
            noEmit: true,
            types: ['node'],
          },
          files: ['consumer.ts'],
        }),
      );
      expect(typeErrors(dir)).toEqual([]);
    });
  }

  it('type-checks a CommonJS TypeScript consumer that requires mnemo (nodenext)', () => {
    const dir = join(app, 'ts-cjs');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'consumer.cts'),
      `import mnemo = require('mnemo');\nexport const start: typeof mnemo.startRuntime = mnemo.startRuntime;\nexport const err: InstanceType<typeof mnemo.MnemoError> | undefined = undefined;\n`,
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'nodenext', strict: true, exactOptionalPropertyTypes: true, noEmit: true, types: ['node'] },
        files: ['consumer.cts'],
      }),
    );
    expect(typeErrors(dir)).toEqual([]);
  });
});
