/**
 * Importing `mnemo` loads the runtime, the memory and recall, and nothing an application may
 * never use: the HTTP server, the OpenAI client, the o200k tokenizer tables, PostgreSQL's
 * driver, LangGraph, the MCP SDK, the AI SDK, OpenTelemetry (its API loads once a tracer
 * provider registers; its SDK never) and the search pool's worker threads (piscina). Each of
 * these loads when first used. Checked on the files a child process really loaded
 * (support/loaded-modules.ts), for the import alone and for a start, a first write and read, a stop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadedFiles, packageOf } from './support/loaded-modules.ts';

/** Packages (or scopes, ending in `/`, or prefixes, ending in `-`) the root entry must not load. */
const LAZY = [
  'fastify',
  '@fastify/',
  'openai',
  'js-tiktoken',
  'pg',
  'pg-protocol',
  '@langchain/',
  '@modelcontextprotocol/',
  'ai',
  '@ai-sdk/',
  '@opentelemetry/sdk-',
  '@opentelemetry/api',
  'piscina',
  'prom-client',
  'zod',
  'yaml',
];

function isLazy(pkg: string): boolean {
  return LAZY.some((l) => (l.endsWith('/') || l.endsWith('-') ? pkg.startsWith(l) : pkg === l));
}

/** The lazy packages among the loaded files, each with one file that shows it. */
function lazyLoaded(files: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const file of files) {
    const pkg = packageOf(file);
    if (pkg !== undefined && isLazy(pkg)) out[pkg] ??= file;
  }
  return out;
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('what importing mnemo loads', { timeout: 60_000 }, () => {
  it('the root entry loads none of the packages that load on first use', () => {
    const files = loadedFiles(`await import(entry('src/index.ts'));`);
    // The runtime and its storage are there (the check sees packages at all).
    expect(files.some((f) => packageOf(f) === 'lmdb')).toBe(true);
    expect(files.some((f) => packageOf(f) === 'xstate')).toBe(true);
    expect(lazyLoaded(files)).toEqual({});
  });

  it('starting a runtime, a first write and read and a stop load none of them either', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-loaded-'));
    dirs.push(dir);
    const files = loadedFiles(`
const { startRuntime } = await import(entry('src/index.ts'));
const runtime = await startRuntime({ dataDir: ${JSON.stringify(dir)} });
await runtime.memory.add('c1', [{ role: 'user', content: 'hello' }]);
if ((await runtime.memory.get('c1')).length !== 1) throw new Error('first read');
await runtime.stop();
`);
    expect(lazyLoaded(files)).toEqual({});
  });

  it('sees a lazy package once it is used: the server entry loads fastify, the postgres entry pg', () => {
    expect(Object.keys(lazyLoaded(loadedFiles(`await import(entry('src/server/index.ts'));`)))).toContain('fastify');
    expect(Object.keys(lazyLoaded(loadedFiles(`await import(entry('src/postgres.ts'));`)))).toContain('pg');
  });

  it('loads the o200k tokenizer on the first count, and counts exactly', () => {
    const files = loadedFiles(`
const { o200kTokenCounter } = await import(entry('src/provider/token-counter.ts'));
const count = await o200kTokenCounter();
// 3 framing + 'user' (1) + 'hello world' (2).
if (count({ role: 'user', content: 'hello world' }) !== 6) throw new Error('count');
`);
    expect(Object.keys(lazyLoaded(files))).toEqual(['js-tiktoken']);
  });
});
